import { resolve } from 'node:path';
import type { Command } from 'commander';
import { databaseFile, isInitialized, resolveDataDir } from '../config.js';
import { oneLine } from '../terminal.js';
import { positiveInt } from './goals.js';
import { action, CliError, globals, printJson } from './shared.js';

/**
 * `colony fork --goal G --at POSITION --data NEW [--from DIR]`: a what-if copy of a goal's history up to a
 * position of the log (the positions `colony replay` and the console's time travel show) as a new data dir,
 * to re-run from there with another tree, budget or agent. `--data` names the NEW dir here; the origin is
 * `--from`, else $COLONY_DATA, else ./.colony — opened read-only, so a running `colony serve` on it is fine.
 */
export function registerFork(program: Command): void {
  program
    .command('fork')
    .description(
      "copy a goal's history up to a log position into a NEW data dir, to re-run it from there (the origin is only read)",
    )
    .requiredOption('--goal <id>', 'the goal')
    .requiredOption('--at <position>', "a log position of the goal's history (as colony replay and time travel show)")
    .option('--from <dir>', 'the origin data dir (default: $COLONY_DATA or ./.colony)')
    .option('--json', 'print the fork as JSON (with the owner token)')
    .addHelpText('after', '\n  --data NEW (required) names the new data dir: absent or empty.')
    .action(action(fork));
}

interface ForkOptions {
  goal: string;
  at: string;
  from?: string;
  json?: boolean;
}

async function fork(opts: ForkOptions, cmd: Command): Promise<void> {
  const goalId = positiveInt(opts.goal, '--goal');
  const position = positiveInt(opts.at, '--at');
  const given = cmd.optsWithGlobals<{ data?: string }>().data;
  if (given === undefined) throw new CliError('--data NEW is required: the new data dir the fork is written to');
  if (process.argv.filter((a) => a === '--data' || a.startsWith('--data=')).length > 1)
    throw new CliError('--data names the new data dir of a fork; give the origin with --from DIR');
  if (globals(cmd).store !== null)
    throw new CliError('colony fork reads a SQLite data dir; drop --store / COLONY_STORE');
  const target = resolve(given);
  const origin = resolveDataDir(opts.from);
  if (target === origin) throw new CliError(`--data ${target} is the origin itself: the fork needs a new directory`);
  if (!isInitialized(origin))
    throw new CliError(`no Colony data in ${origin} (the origin: --from DIR, else $COLONY_DATA, else ./.colony)`);
  const [{ openDatabase }, { forkGoal, forkJson }] = await Promise.all([
    import('../engine/db.js'),
    import('../evidence/fork.js'),
  ]);
  const source = openDatabase(databaseFile(origin), { readonly: true });
  try {
    const r = forkGoal(source, { goalId, position, target, originDataDir: origin, ownerToken: true });
    const name = r.ownerName;
    if (opts.json) return printJson(forkJson(r));
    const lines = [
      `Forked goal ${goalId} at position ${position} of ${origin} into ${target}`,
      `Origin: cut at position ${r.origin.at.position} (hash ${r.origin.at.hash}); the origin's head was position ${r.origin.head.position} (hash ${r.origin.head.hash})`,
      `Copied ${r.copied} events of ${r.streams.length} streams; the fork's log verifies (head ${r.head.position}, hash ${r.head.hash})`,
      `Owner "${name}" token for the fork (shown once, keep it): ${r.ownerToken}`,
      ...secretLines(r.secretsNotCopied, target),
      `Start it: colony serve --data ${target} --port 7071`,
    ];
    process.stdout.write(`${lines.map(oneLine).join('\n')}\n`);
  } finally {
    source.close();
  }
}

function secretLines(secrets: { name: string; scope: { label: string } }[], target: string): string[] {
  if (secrets.length === 0) return ['Secrets: none in scope of the goal at that position.'];
  return [
    `Secrets not copied (their values never leave the origin); set them again in the fork:`,
    ...secrets.map((s) => `  colony secrets set ${s.name} - --scope ${s.scope.label} --data ${target}`),
  ];
}
