import type { App } from '../app.js';
import { checkRecipe, recipeDecider } from '../commands/verifiers.js';
import { DomainError } from '../errors.js';
import type { VerifierConfig } from '../events/tasks.js';
import { DEFAULT_RECIPE_TIMEOUT_SEC, verifierStream } from '../events/verifiers.js';
import { pathPolicyFor } from './projects/paths.js';
import { activeRecipe, getRecipe, type RecipeRow } from '../projections/verifiers.js';
import { isOwner, who } from './goals.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * Verifier recipes (DESIGN §8): the owner's command lines, the only ones a command verifier runs.
 * Shared by the CLI (`colony verifiers`) and the owner's MCP tools; each function is one transaction.
 */
export interface NewRecipe {
  name: string;
  command: string;
  cwd: string | null;
  timeoutSec: number | null;
  secrets: string[];
}

export function addRecipe(app: App, by: Speaker, input: NewRecipe, actor: CommandOptions): RecipeRow {
  if (!isOwner(by))
    throw new DomainError('ErrForbidden', 'only the owner registers verifier recipes: they are what runs on the host');
  const timeoutSec = input.timeoutSec ?? DEFAULT_RECIPE_TIMEOUT_SEC;
  const secrets = [...new Set(input.secrets)].sort();
  checkRecipe({ name: input.name, command: input.command, timeoutSec, secrets });
  const cwd = input.cwd === null ? null : (pathPolicyFor(app).guard({ cwd: input.cwd }).cwd as string);
  const result = app.engine.transact(actor, (uow) => {
    if (activeRecipe(app.engine.db, by.tenant, input.name)) {
      throw new DomainError(
        'ErrVerifierExists',
        `a verifier recipe named ${input.name} exists: remove it first to change it (tasks approved against it keep their record)`,
        { name: input.name },
      );
    }
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
          timeoutSec,
          secrets,
          by: who(by),
        },
      },
      actor,
    );
    return recipeId;
  });
  const id = result.value ?? (result.events[0]!.data as { recipeId: number }).recipeId;
  return getRecipe(app.engine.db, id)!;
}

export function removeRecipe(app: App, by: Speaker, name: string, actor: CommandOptions): RecipeRow {
  if (!isOwner(by)) throw new DomainError('ErrForbidden', 'only the owner removes verifier recipes');
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

/**
 * A task tree's `{kind: "command", recipe, cwd?}` as the task will record it: the recipe's id and its
 * exact command line, working directory (the recipe's, else the tree's, else none: the workspace),
 * timeout and granted secrets — what the approval card shows is what runs.
 */
export function commandVerifierOf(
  app: App,
  tenant: number,
  recipeName: string,
  cwd: string | undefined,
  path: string,
): Extract<VerifierConfig, { kind: 'command' }> {
  let recipe: RecipeRow;
  try {
    recipe = recipeNamed(app, tenant, recipeName);
  } catch (e) {
    throw new DomainError('ErrVerifierNotFound', `${path}.verifier_config.recipe: ${(e as Error).message}`, {
      path,
      recipe: recipeName,
    });
  }
  const dir = recipe.cwd ?? cwd;
  return {
    kind: 'command',
    recipe: recipe.name,
    recipeId: recipe.recipeId,
    cmd: recipe.command,
    timeout_sec: recipe.timeoutSec,
    ...(dir !== undefined ? { cwd: dir } : {}),
    ...(recipe.secrets.length ? { secrets: recipe.secrets } : {}),
  };
}

/** Why a recorded command verifier may not run now (its recipe was removed or replaced since approval), or null. */
export function recipeProblem(
  app: App,
  tenant: number,
  v: Extract<VerifierConfig, { kind: 'command' }>,
): string | null {
  if (v.recipeId === undefined)
    return 'it names a raw command from before verifier recipes: only owner-registered recipes run';
  const recipe = getRecipe(app.engine.db, v.recipeId);
  if (!recipe || recipe.ownerId !== tenant) return `its verifier recipe ${v.recipe ?? v.recipeId} does not exist`;
  if (recipe.removedAt !== null) return `its verifier recipe "${recipe.name}" was removed on ${recipe.removedAt}`;
  if (recipe.command !== v.cmd) return `its verifier recipe "${recipe.name}" no longer holds the approved command`;
  return null;
}
