import type { Command } from 'commander';
import { withOwner } from './owner.js';
import { action, CliError, globals, printJson } from './shared.js';

/**
 * `colony checkpoint`: sign the log as it is now (or show the latest checkpoint if the log has not grown).
 * Its JSON is the file an auditor keeps and later passes to `colony verify --since`.
 * `colony checkpoints list`: the signed checkpoints, newest first.
 */
export function registerCheckpoint(program: Command): void {
  program
    .command('checkpoint')
    .description(
      'sign a checkpoint of the event log (tree size, Merkle root, stream heads); keep its --json output to check the log later with verify --since',
    )
    .option('--json', 'print the signed checkpoint {checkpoint: {body, signature}, publicKey} as JSON')
    .action(
      action((opts: { json?: boolean }, cmd: Command) =>
        withOwner(cmd, async (app) => {
          const { signCheckpoint } = await import('../evidence/sign.js');
          const { checkpoint, reused } = signCheckpoint(app.engine, globals(cmd).dataDir, 'manual', 'cli');
          if (opts.json) return printJson({ checkpoint: checkpoint.checkpoint, publicKey: checkpoint.publicKey });
          const b = checkpoint.checkpoint.body;
          process.stdout.write(
            `${reused ? 'unchanged since checkpoint' : 'signed checkpoint'} #${checkpoint.n}: ${b.treeSize} events, root ${b.rootHash}, ` +
              `${b.heads.count} streams, at ${b.time}, key ${b.keyId}\n`,
          );
        }),
      ),
    );
  program
    .command('checkpoints')
    .description('the signed checkpoints of the log')
    .command('list')
    .description('list the signed checkpoints, newest first')
    .option('--limit <n>', 'at most this many', '20')
    .option('--json', 'print them as JSON')
    .action(
      action((opts: { limit: string; json?: boolean }, cmd: Command) => {
        const limit = Number(opts.limit);
        if (!/^\d+$/.test(opts.limit) || limit < 1 || limit > 10_000)
          throw new CliError(`--limit must be an integer from 1 to 10000, not "${opts.limit}"`);
        return withOwner(cmd, async (app) => {
          const { listCheckpoints } = await import('../evidence/checkpoint.js');
          const list = listCheckpoints(app.engine.db, limit);
          if (opts.json)
            return printJson(
              list.map((c) => ({ n: c.n, reason: c.reason, checkpoint: c.checkpoint, publicKey: c.publicKey })),
            );
          if (list.length === 0)
            return void process.stdout.write('no checkpoints yet ("colony checkpoint" signs one)\n');
          for (const c of list) {
            const b = c.checkpoint.body;
            process.stdout.write(
              `#${c.n}  ${b.time}  ${String(b.treeSize).padStart(9)} events  root ${b.rootHash.slice(0, 16)}…  ${c.reason.padEnd(6)}  ${b.keyId}\n`,
            );
          }
        });
      }),
    );
}
