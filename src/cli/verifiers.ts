import type { Command } from 'commander';
import type { RecipeRow } from '../projections/verifiers.js';
import type { UserRow } from '../projections/principal-queries.js';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';

/**
 * `colony verifiers add|list|remove`: the command lines command verifiers may run. A task
 * tree names a recipe; nothing else an agent writes ever runs as a verifier.
 */
const ownerSpeaker = (o: UserRow) => ({ key: `user-${o.userId}`, name: o.name, tenant: o.userId });
const collect = (value: string, previous: string[]): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

export function registerVerifiers(program: Command): void {
  const verifiers = program
    .command('verifiers')
    .description('verifier recipes: the only command lines a command verifier runs on this host');
  registerAdd(verifiers);
  registerList(verifiers);
  registerRemove(verifiers);
}

function registerAdd(verifiers: Command): void {
  verifiers
    .command('add <name>')
    .description(
      'register a recipe: task trees name it ({"kind":"command","recipe":NAME}); it runs exactly as `/bin/sh -c CMD`, exit 0 approves',
    )
    .requiredOption('--command <cmd>', 'the exact command line')
    .option(
      '--cwd <dir>',
      "working directory (inside the allowed roots; default: where the checked work lies — the task's project, else the assignee's working directory — read-only)",
    )
    .option('--writable', 'its processes may write in --cwd (else every verifier directory is mounted read-only)')
    .option('--timeout <seconds>', 'seconds before it is killed and the task rejected (1–3600)', '60')
    .option(
      '--secret <names>',
      'a user-scope secret its processes get, by name (repeatable or comma-separated); task-scope secrets always reach them',
      collect,
      [],
    )
    .option('--json', 'print the recipe as JSON')
    .action(
      action(
        (
          name: string,
          opts: {
            command: string;
            cwd?: string;
            writable?: boolean;
            timeout: string;
            secret: string[];
            json?: boolean;
          },
          cmd: Command,
        ) => {
          if (!/^\d+$/.test(opts.timeout))
            throw new CliError(`--timeout must be a whole number of seconds, not "${opts.timeout}"`);
          return withOwner(cmd, async (app, owner) => {
            const { addRecipe } = await import('../actions/verifiers.js');
            const r = addRecipe(
              app,
              ownerSpeaker(owner),
              {
                name,
                command: opts.command,
                cwd: opts.cwd ?? null,
                writable: opts.writable === true,
                timeoutSec: Number(opts.timeout),
                secrets: opts.secret,
              },
              { actor: `user:${owner.name}` },
            );
            if (opts.json) return printJson(view(r));
            process.stdout.write(`Added verifier recipe ${r.name}: ${describe(r)}\n`);
          });
        },
      ),
    );
}

function registerList(verifiers: Command): void {
  verifiers
    .command('list')
    .description('the recipes, each with its exact command line')
    .option('--all', 'include removed recipes')
    .option('--json', 'print a JSON array')
    .action(
      action((opts: { all?: boolean; json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const { listRecipes } = await import('../projections/verifiers.js');
          const rows = listRecipes(app.engine.db, owner.userId, opts.all);
          if (opts.json) return printJson(rows.map(view));
          if (rows.length === 0)
            return void process.stdout.write(
              'No verifier recipes (add one: colony verifiers add NAME --command CMD)\n',
            );
          for (const r of rows)
            process.stdout.write(`${r.name}${r.removedAt ? ` (removed ${r.removedAt})` : ''}: ${describe(r)}\n`);
        }),
      ),
    );
}

function registerRemove(verifiers: Command): void {
  verifiers
    .command('remove <name>')
    .description('remove a recipe: it runs no more (tasks approved against it wait; you are told)')
    .option('--json', 'print the removed recipe as JSON')
    .action(
      action((name: string, opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app, owner) => {
          const { removeRecipe } = await import('../actions/verifiers.js');
          const r = removeRecipe(app, ownerSpeaker(owner), name, { actor: `user:${owner.name}` });
          if (opts.json) return printJson(view(r));
          process.stdout.write(`Removed verifier recipe ${r.name}\n`);
        }),
      ),
    );
}

// The verifier tools show the same shape; the CLI keeps its own so that loading it never loads MCP
// (test/cli/startup.test.ts).
const view = (r: RecipeRow) => ({
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

const describe = (r: RecipeRow): string =>
  `sh -c ${JSON.stringify(r.command)} in ${r.cwd ?? 'where the checked work lies'} (${r.writable ? 'writable' : 'read-only'}), timeout ${r.timeoutSec}s${r.secrets.length ? `, secrets ${r.secrets.join(', ')}` : ''}`;
