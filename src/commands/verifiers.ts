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
import { type By } from '../events/principals.js';

/**
 * The verifier recipe decider (`verifier-<n>` streams): added once, removed once. Whether the name is
 * free among the owner's active recipes is a fact from other streams, checked by the action.
 */
export type AddRecipe = { type: 'AddRecipe'; recipe: VerifierRecipeAdded['data'] };
export type RemoveRecipe = { type: 'RemoveRecipe'; by: By };
export type RecipeCommand = AddRecipe | RemoveRecipe;

export type Recipe = { status: 'absent' } | { status: 'active' | 'removed'; recipeId: number; name: string };

function evolve(state: Recipe, event: VerifierRecipeEvent): Recipe {
  switch (event.type) {
    case 'VerifierRecipeAdded':
      return { status: 'active', recipeId: event.data.recipeId, name: event.data.name };
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
    case 'AddRecipe':
      if (state.status !== 'absent')
        throw new DomainError('ErrVerifierExists', `verifier recipe ${command.recipe.recipeId} already exists`);
      checkRecipe(command.recipe);
      return [{ type: 'VerifierRecipeAdded', data: command.recipe }];
    case 'RemoveRecipe':
      if (state.status === 'absent') throw new DomainError('ErrVerifierNotFound', 'verifier recipe not found');
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
  // eslint-disable-next-line no-control-regex
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
