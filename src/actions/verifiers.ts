import type { App } from '../app.js';
import { recipeDecider, recipeProblem as problemOf } from '../commands/verifiers.js';
import { DomainError } from '../errors.js';
import type { VerifierConfig } from '../events/tasks.js';
import { DEFAULT_RECIPE_TIMEOUT_SEC, verifierStream } from '../events/verifiers.js';
import { pathPolicyFor } from './projects/paths.js';
import { activeRecipe, getRecipe, type RecipeRow } from '../projections/verifiers.js';
import { who } from './goals.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * Verifier recipes: the owner's command lines, the only ones a command verifier runs. Shared by the CLI
 * (`colony verifiers`) and the owner's MCP tools; each function is one transaction that finds what it
 * needs and routes to the recipe decider, which says who may add or remove one and what a recipe must be.
 */
export interface NewRecipe {
  name: string;
  command: string;
  cwd: string | null;
  /** Its processes may write in `cwd` (which it then needs); else its directory is mounted read-only. */
  writable: boolean;
  timeoutSec: number | null;
  secrets: string[];
}

export function addRecipe(app: App, by: Speaker, input: NewRecipe, actor: CommandOptions): RecipeRow {
  const timeoutSec = input.timeoutSec ?? DEFAULT_RECIPE_TIMEOUT_SEC;
  const secrets = [...new Set(input.secrets)].sort();
  // The directory is resolved on the host now (symlinks and all), so it is checked here, before the decider.
  const cwd = input.cwd === null ? null : (pathPolicyFor(app).guard({ cwd: input.cwd }).cwd as string);
  if (input.writable && cwd === null)
    throw new DomainError(
      'ErrInvalidInput',
      'a writable recipe needs its own cwd: without one it runs where the checked work lies, which a verifier only reads',
      { field: 'writable' },
    );
  const result = app.engine.transact(actor, (uow) => {
    const nameTaken = activeRecipe(app.engine.db, by.tenant, input.name) !== null;
    const recipeId = uow.ids.next('verifier');
    app.engine.handle(
      recipeDecider,
      verifierStream(recipeId),
      {
        type: 'AddRecipe',
        recipe: {
          recipeId,
          ownerId: by.tenant,
          name: input.name,
          command: input.command,
          cwd,
          ...(input.writable ? { writable: true } : {}),
          timeoutSec,
          secrets,
          by: who(by),
        },
        nameTaken,
      },
      actor,
    );
    return recipeId;
  });
  const id = result.value ?? (result.events[0]!.data as { recipeId: number }).recipeId;
  return getRecipe(app.engine.db, id)!;
}

export function removeRecipe(app: App, by: Speaker, name: string, actor: CommandOptions): RecipeRow {
  const result = app.engine.transact(actor, () => {
    const recipe = recipeNamed(app, by.tenant, name);
    app.engine.handle(recipeDecider, verifierStream(recipe.recipeId), { type: 'RemoveRecipe', by: who(by) }, actor);
    return recipe.recipeId;
  });
  const id = result.value ?? (result.events[0]!.data as { recipeId: number }).recipeId;
  return getRecipe(app.engine.db, id)!;
}

export function recipeNamed(app: App, tenant: number, name: string): RecipeRow {
  const recipe = activeRecipe(app.engine.db, tenant, name);
  if (!recipe) {
    throw new DomainError(
      'ErrVerifierNotFound',
      `no verifier recipe named "${name}": the owner registers them with \`colony verifiers add\` (list_verifiers shows them)`,
      { recipe: name },
    );
  }
  return recipe;
}

/** Why a recorded command verifier may not run now (its recipe was removed or replaced since approval), or null. */
export function recipeProblem(
  app: App,
  tenant: number,
  v: Extract<VerifierConfig, { kind: 'command' }>,
): string | null {
  const recipe = v.recipeId === undefined ? null : getRecipe(app.engine.db, v.recipeId);
  return problemOf(v, recipe && recipe.ownerId === tenant ? recipe : null);
}
