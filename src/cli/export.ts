import { renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { withOwner } from './owner.js';
import { action, CliError, globals, printJson, progressBar } from './shared.js';

/**
 * `colony export --goal ID --out FILE`: the goal's bundle — every event of its streams with an inclusion
 * proof to one signed checkpoint, the stream-head proofs, the public key and the goal's snapshot — for
 * `colony verify-bundle` or tools/verify-bundle.mjs, offline.
 */
export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      "write a goal's history as a self-contained, signed bundle an auditor can verify offline (colony verify-bundle)",
    )
    .requiredOption('--goal <id>', 'the goal')
    .requiredOption('--out <file>', 'where to write the bundle (replaced whole)')
    .option('--json', 'print {path, goal_id, events, streams, bytes, checkpoint} as JSON')
    .action(
      action((opts: { goal: string; out: string; json?: boolean }, cmd: Command) => {
        const goalId = Number(opts.goal);
        if (!/^\d+$/.test(opts.goal) || !Number.isSafeInteger(goalId) || goalId < 1)
          throw new CliError(`--goal must be a positive integer, not "${opts.goal}"`);
        if (!opts.out.trim()) throw new CliError('--out must not be empty');
        const path = resolve(opts.out);
        return withOwner(cmd, async (app, owner) => {
          const [{ exportGoalBundle }, { getGoal }] = await Promise.all([
            import('../evidence/bundle-export.js'),
            import('../projections/goal-queries.js'),
          ]);
          if (getGoal(app.engine.db, goalId)?.ownerId !== owner.userId) throw new CliError(`goal ${goalId} not found`);
          const bar = opts.json ? progressBar('') : progressBar('proving');
          const { bundle, text, reusedCheckpoint } = exportGoalBundle(
            app.engine,
            globals(cmd).dataDir,
            goalId,
            bar.update,
          );
          bar.stop();
          writeWhole(path, text);
          const b = bundle.checkpoint.body;
          const checkpoint = {
            tree_size: b.treeSize,
            root_hash: b.rootHash,
            time: b.time,
            key_id: b.keyId,
            reused: reusedCheckpoint,
          };
          if (opts.json) {
            return printJson({
              path,
              goal_id: goalId,
              events: bundle.events.length,
              streams: bundle.streams.length,
              bytes: Buffer.byteLength(text),
              checkpoint,
            });
          }
          process.stdout.write(
            `${path}\ngoal ${goalId}: ${bundle.events.length} events in ${bundle.streams.length} streams, ${Buffer.byteLength(text)} bytes; ` +
              `checkpoint of ${b.treeSize} events (root ${b.rootHash}) signed at ${b.time} by ${b.keyId}\n`,
          );
        });
      }),
    );
}

function writeWhole(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new CliError(`cannot write ${path}: ${err.code ?? err.message}`);
  }
}
