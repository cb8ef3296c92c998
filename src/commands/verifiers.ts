import { DomainError, invalidInput } from '../errors.js';
import {
  MAX_RECIPE_COMMAND,
  MAX_RECIPE_TIMEOUT_SEC,
  RECIPE_NAME,
  type VerifierRecipeAdded,
  type VerifierRecipeEvent,
} from '../events/verifiers.js';
import { secretName } from './secrets.js';
import type { Decider } from '../engine/decider.js';
import { type By, isOwner } from '../events/principals.js';
import type { VerifierConfig } from '../events/tasks.js';

/**
 * The verifier recipe decider (`verifier-<n>` streams): added once, removed once, and only by the owner —
 * a recipe is what runs on the host. A name is used by one active recipe of the owner at a time: whether
 * it is taken is a fact from other streams, read by the caller in the same transaction.
 */
export type AddRecipe = {
  type: 'AddRecipe';
  recipe: VerifierRecipeAdded['data'];
  /** Fact: another active recipe of the owner has this name. */
  nameTaken: boolean;
};
export type RemoveRecipe = { type: 'RemoveRecipe'; by: By };
export type RecipeCommand = AddRecipe | RemoveRecipe;

export type Recipe =
  { status: 'absent' } | { status: 'active' | 'removed'; recipeId: number; ownerId: number; name: string };

function evolve(state: Recipe, event: VerifierRecipeEvent): Recipe {
  switch (event.type) {
    case 'VerifierRecipeAdded': {
      const { recipeId, ownerId, name } = event.data;
      return { status: 'active', recipeId, ownerId, name };
    }
    case 'VerifierRecipeRemoved':
      return state.status === 'absent' ? state : { ...state, status: 'removed' };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: RecipeCommand, state: Recipe): VerifierRecipeEvent[] {
  switch (command.type) {
    case 'AddRecipe': {
      const r = command.recipe;
      if (!isOwner(r.by, r.ownerId))
        throw new DomainError(
          'ErrForbidden',
          'only the owner registers verifier recipes: they are what runs on the host',
        );
      if (state.status !== 'absent')
        throw new DomainError('ErrVerifierExists', `verifier recipe ${r.recipeId} already exists`);
      checkRecipe(r);
      if (command.nameTaken)
        throw new DomainError(
          'ErrVerifierExists',
          `a verifier recipe named ${r.name} exists: remove it first to change it (tasks approved against it keep their record)`,
          { name: r.name },
        );
      return [{ type: 'VerifierRecipeAdded', data: r }];
    }
    case 'RemoveRecipe':
      if (state.status === 'absent') throw new DomainError('ErrVerifierNotFound', 'verifier recipe not found');
      if (!isOwner(command.by, state.ownerId))
        throw new DomainError('ErrForbidden', 'only the owner removes verifier recipes');
      return state.status === 'removed'
        ? []
        : [{ type: 'VerifierRecipeRemoved', data: { recipeId: state.recipeId, by: command.by } }];
    default: {
      const never: never = command;
      return never;
    }
  }
}

/** What a recipe must satisfy to be run at all: a name agents can type, one visible command line, sane limits. */
export function checkRecipe(r: Pick<VerifierRecipeAdded['data'], 'name' | 'command' | 'timeoutSec' | 'secrets'>): void {
  if (!RECIPE_NAME.test(r.name))
    throw invalidInput(
      `recipe name "${r.name}" must match ${RECIPE_NAME.source} (lowercase letter first, 2–64 of a-z, 0-9, -)`,
      { field: 'name' },
    );
  if (r.command.trim() === '') throw invalidInput('a recipe needs a command line', { field: 'command' });
  if (r.command.length > MAX_RECIPE_COMMAND)
    throw invalidInput(`a recipe's command is at most ${MAX_RECIPE_COMMAND} characters`, { field: 'command' });
  // A control character (a NUL, an escape sequence, a carriage return) would make the approval card show something other than what runs.
  if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(r.command))
    throw invalidInput("a recipe's command may not contain control characters (newlines and tabs are fine)", {
      field: 'command',
    });
  if (!Number.isInteger(r.timeoutSec) || r.timeoutSec < 1 || r.timeoutSec > MAX_RECIPE_TIMEOUT_SEC) {
    throw invalidInput(`timeout must be a whole number of seconds in 1–${MAX_RECIPE_TIMEOUT_SEC}`, {
      field: 'timeout_sec',
    });
  }
  for (const s of r.secrets)
    if (secretName(s) !== s) throw invalidInput(`secret name "${s}" must be upper case`, { field: 'secrets' });
}

export const recipeDecider: Decider<Recipe, RecipeCommand, VerifierRecipeEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};

/**
 * Why a command verifier recorded on a task may not run now, or null: only an owner-registered recipe
 * runs, and only while it is active and still holds the command the task was approved with. `recipe` is
 * the recorded recipe as the owner's tenant holds it (null: it does not exist there).
 */
export function recipeProblem(
  v: Extract<VerifierConfig, { kind: 'command' }>,
  recipe: { name: string; command: string; removedAt: string | null } | null,
): string | null {
  if (v.recipeId === undefined)
    return 'it names a raw command from before verifier recipes: only owner-registered recipes run';
  if (!recipe) return `its verifier recipe ${v.recipe ?? v.recipeId} does not exist`;
  if (recipe.removedAt !== null) return `its verifier recipe "${recipe.name}" was removed on ${recipe.removedAt}`;
  if (recipe.command !== v.cmd) return `its verifier recipe "${recipe.name}" no longer holds the approved command`;
  return null;
}
