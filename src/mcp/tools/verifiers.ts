import * as z from 'zod';
import { addRecipe, removeRecipe } from '../../actions/verifiers.js';
import { MAX_RECIPE_COMMAND, MAX_RECIPE_TIMEOUT_SEC } from '../../events/verifiers.js';
import { listRecipes, type RecipeRow } from '../../projections/verifiers.js';
import { defineTool, type AnyTool } from '../tool.js';
import { speaker } from '../../events/principals.js';

/**
 * Verifier recipes: the owner registers the command lines command verifiers may run (add_verifier,
 * remove_verifier; also `colony verifiers`); agents list them to name one in a task tree. Nothing runs
 * on the host unless the owner approved that exact command line.
 */
const Recipe = z.object({
  name: z.string(),
  command: z.string(),
  cwd: z.string().nullable(),
  writable: z.boolean(),
  timeout_sec: z.number().int(),
  secrets: z.array(z.string()),
  added_by: z.string(),
  added_at: z.string(),
  removed_at: z.string().nullable(),
});
const view = (r: RecipeRow): z.infer<typeof Recipe> => ({
  name: r.name,
  command: r.command,
  cwd: r.cwd,
  writable: r.writable,
  timeout_sec: r.timeoutSec,
  secrets: r.secrets,
  added_by: r.addedBy,
  added_at: r.addedAt,
  removed_at: r.removedAt,
});

const add = defineTool({
  name: 'add_verifier',
  title: 'Register a verifier recipe',
  description: `Owner only. Registers a command line a command verifier may run, under a name task trees refer to ({"kind":"command","recipe":"NAME"}). It runs exactly as written, as \`/bin/sh -c COMMAND\`, in cwd (inside the allowed roots; default: where the checked work lies — the task's project, else the assignee's working directory), mounted read-only unless writable is true (which needs cwd), with the task's secrets and only the user-scope secrets listed in secrets; exit 0 approves. Recipes are immutable: remove one and add it again to change it. Errors: ErrVerifierExists, ErrInvalidInput, ErrPathOutsideRoots.`,
  trust: 'elevated',
  surface: 'owner',
  module: 'verifiers',
  input: z.strictObject({
    name: z.string().min(1).max(64).describe('^[a-z][a-z0-9-]{1,63}$'),
    command: z.string().min(1).max(MAX_RECIPE_COMMAND).describe('The exact shell command line'),
    cwd: z.string().min(1).max(4096).optional().describe('Working directory inside the allowed roots'),
    writable: z.boolean().default(false).describe('Its processes may write in cwd (needs cwd); else read-only'),
    timeout_sec: z.number().int().min(1).max(MAX_RECIPE_TIMEOUT_SEC).optional().describe('Default 60'),
    secrets: z
      .array(z.string().min(1).max(128))
      .max(32)
      .default([])
      .describe('Names of your user-scope secrets its processes get'),
  }),
  output: Recipe,
  handler(ctx, a) {
    return view(
      addRecipe(
        ctx.app,
        speaker(ctx.caller),
        {
          name: a.name,
          command: a.command,
          cwd: a.cwd ?? null,
          writable: a.writable,
          timeoutSec: a.timeout_sec ?? null,
          secrets: a.secrets,
        },
        ctx.command,
      ),
    );
  },
});

const list = defineTool({
  name: 'list_verifiers',
  title: 'List verifier recipes',
  description:
    'The verifier recipes your owner registered: name, the exact command line, working directory, timeout and granted secret names (never values). Name one in propose_task_tree as {"kind":"command","recipe":"NAME"}; a raw command is refused.',
  trust: 'read',
  surface: 'agent',
  module: 'verifiers',
  input: z.strictObject({ include_removed: z.boolean().default(false) }),
  output: z.object({ verifiers: z.array(Recipe) }),
  handler(ctx, a) {
    return { verifiers: listRecipes(ctx.app.engine.db, speaker(ctx.caller).tenant, a.include_removed).map(view) };
  },
});

const remove = defineTool({
  name: 'remove_verifier',
  title: 'Remove a verifier recipe',
  description:
    'Owner only, destructive. Removes a verifier recipe: it runs no more — tasks approved against it wait (you are told) until you cancel them or verify them otherwise. The first call returns a confirm_token; call again with the same arguments plus confirmation_token within 60 s. Errors: ErrVerifierNotFound.',
  trust: 'destructive',
  surface: 'owner',
  module: 'verifiers',
  input: z.strictObject({ name: z.string().min(1).max(64) }),
  output: Recipe,
  handler(ctx, a) {
    return view(removeRecipe(ctx.app, speaker(ctx.caller), a.name, ctx.command));
  },
});

export const verifierTools: readonly AnyTool[] = [add, list, remove];
