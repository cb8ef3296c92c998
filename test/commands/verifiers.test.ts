import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recipeDecider, recipeProblem, type RecipeCommand } from '../../src/commands/verifiers.js';
import type { VerifierRecipeAdded, VerifierRecipeRemoved } from '../../src/events/verifiers.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The verifier recipe decider, given/when/then: only the owner adds and removes recipes, a name belongs
 * to one active recipe of the owner, and a recipe must be runnable as shown. And which recorded command
 * verifiers may still run.
 */
const owner = { key: 'user-1', name: 'owner' };
const agent = { key: 'agent-3', name: 'worker' };
const added: VerifierRecipeAdded = {
  type: 'VerifierRecipeAdded',
  data: {
    recipeId: 4,
    ownerId: 1,
    name: 'unit-tests',
    command: 'npm test',
    cwd: null,
    timeoutSec: 60,
    secrets: [],
    by: owner,
  },
};
const removed: VerifierRecipeRemoved = { type: 'VerifierRecipeRemoved', data: { recipeId: 4, by: owner } };
const add = (over: Partial<VerifierRecipeAdded['data']> = {}, nameTaken = false): RecipeCommand => ({
  type: 'AddRecipe',
  recipe: { ...added.data, ...over },
  nameTaken,
});

describe('verifier recipe decider', () => {
  it('adds a recipe the owner registers; an agent may not (ErrForbidden, nothing written)', () => {
    spec(recipeDecider).given([]).when(add()).then([added]);
    spec(recipeDecider)
      .given([])
      .when(add({ by: agent }))
      .thenThrows('ErrForbidden', 'only the owner registers verifier recipes');
    spec(recipeDecider)
      .given([])
      .when(add({ by: { key: 'user-2', name: 'other' } }))
      .thenThrows('ErrForbidden');
  });

  it('refuses a name another active recipe of the owner has — after checking the recipe itself', () => {
    const e = spec(recipeDecider)
      .given([])
      .when(add({}, true))
      .thenThrows('ErrVerifierExists', 'a verifier recipe named unit-tests exists: remove it first');
    assert.deepEqual(e.details, { name: 'unit-tests' });
    spec(recipeDecider)
      .given([])
      .when(add({ command: ' ' }, true))
      .thenThrows('ErrInvalidInput', 'needs a command line');
  });

  it('refuses a recipe that cannot run as shown', () => {
    for (const bad of [
      { name: 'Unit Tests' },
      { command: 'x'.repeat(4001) },
      { command: 'npm test\u001b[2K' },
      { timeoutSec: 0 },
      { timeoutSec: 3601 },
      { secrets: ['api_key'] },
    ])
      spec(recipeDecider).given([]).when(add(bad)).thenThrows('ErrInvalidInput');
  });

  it('only the owner removes a recipe; removing twice writes nothing', () => {
    spec(recipeDecider)
      .given([added])
      .when({ type: 'RemoveRecipe', by: agent })
      .thenThrows('ErrForbidden', 'only the owner removes verifier recipes');
    spec(recipeDecider).given([added]).when({ type: 'RemoveRecipe', by: owner }).then([removed]);
    spec(recipeDecider).given([added, removed]).when({ type: 'RemoveRecipe', by: owner }).thenNothingHappened();
    spec(recipeDecider).given([]).when({ type: 'RemoveRecipe', by: owner }).thenThrows('ErrVerifierNotFound');
  });
});

describe('which recorded command verifiers may run', () => {
  const v = { kind: 'command' as const, cmd: 'npm test', recipe: 'unit-tests', recipeId: 4 };
  const recipe = { name: 'unit-tests', command: 'npm test', removedAt: null };
  it('one whose recipe is active and holds the approved command', () => {
    assert.equal(recipeProblem(v, recipe), null);
  });
  it('not a raw command, a missing recipe, a removed one or one that changed', () => {
    assert.match(recipeProblem({ kind: 'command', cmd: 'make' }, null)!, /raw command/);
    assert.match(recipeProblem(v, null)!, /recipe unit-tests does not exist/);
    assert.match(recipeProblem(v, { ...recipe, removedAt: '2026-01-02' })!, /was removed on 2026-01-02/);
    assert.match(recipeProblem(v, { ...recipe, command: 'npm test --all' })!, /no longer holds the approved command/);
  });
});
