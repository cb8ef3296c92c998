import type { Event } from '../engine/event.js';
import { type By } from './principals.js';

/**
 * Verifier recipes: the only command lines a command verifier may run. An owner registers
 * a recipe — name, the exact command line, an optional working directory, a timeout and the user-scope
 * secrets it may see — and a task tree refers to it by name; an agent never supplies a shell command.
 * Each recipe is its own `verifier-<n>` stream. A recipe is immutable: to change one, remove it and add
 * it again (a new id), so a task approved against a recipe runs exactly what its approval card showed.
 */
export type VerifierRecipeAdded = Event<
  'VerifierRecipeAdded',
  {
    recipeId: number;
    ownerId: number;
    name: string;
    /** Run as `/bin/sh -c <command>`, exactly as written here. */
    command: string;
    /**
     * The working directory (resolved, inside the allowed roots when added); null: where the checked work
     * lies (the task's project, else the assignee's working directory; the owner's own tree may name one).
     */
    cwd: string | null;
    /** Its processes may write in `cwd` (absent on recipes added before: read-only, as every other verifier directory). */
    writable?: boolean;
    timeoutSec: number;
    /** User-scope secrets the owner grants this recipe's processes (by name); task-scope secrets always reach them. */
    secrets: string[];
    by: By;
  }
>;

export type VerifierRecipeRemoved = Event<'VerifierRecipeRemoved', { recipeId: number; by: By }>;

export type VerifierRecipeEvent = VerifierRecipeAdded | VerifierRecipeRemoved;

export const verifierStream = (recipeId: number): string => `verifier-${recipeId}`;

export const RECIPE_NAME = /^[a-z][a-z0-9-]{1,63}$/;
export const MAX_RECIPE_COMMAND = 4000;
export const DEFAULT_RECIPE_TIMEOUT_SEC = 60;
export const MAX_RECIPE_TIMEOUT_SEC = 3600;
