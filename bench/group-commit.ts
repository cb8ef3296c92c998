import { join } from 'node:path';
import { seededEngine, RawInserts } from './commands.js';
import { figure, median, prng, seconds, type Figure } from './util.js';
import { CardWorkload } from './workload.js';

/**
 * Group commit at durability FULL (src/engine/group-commit.ts), in process:
 *
 * - commands_per_s_full_grouped: 10 concurrent writers, each a grouped caller (as an MCP tool call is)
 *   awaiting its answer before its next command, against raw single-row BEGIN IMMEDIATE … COMMIT
 *   transactions on the same disk. Each COMMIT is an fsync; ten writers share one per batch.
 * - commands_per_s_full_grouped_1: one grouped writer against the same commands run ungrouped — what
 *   the batch costs a lone caller (one turn of the event loop, no timer): the ratio should be ~1.
 *
 * Rounds alternate so drift hits all alike; medians count.
 */
const WRITERS = 10;

export async function benchGroupCommit(dir: string, n: number, rounds: number): Promise<Record<string, Figure>> {
  const raw = new RawInserts(join(dir, 'raw-grouped.db'), 'full');
  const engine = seededEngine(join(dir, 'engine-grouped.db'), 'full', n);
  const workload = new CardWorkload(engine, prng(7));
  const step = () => engine.group.run(() => workload.step());
  const rates = { raw: [] as number[], grouped: [] as number[], lone: [] as number[], plain: [] as number[] };
  try {
    for (let r = 0; r < rounds; r++) {
      rates.raw.push(n / seconds(() => raw.insert(n)));
      const before = { ...engine.group.stats };
      rates.grouped.push(
        n /
          (await timed(() =>
            Promise.all(
              Array.from({ length: WRITERS }, async () => {
                for (let i = 0; i < n / WRITERS; i++) await step();
              }),
            ),
          )),
      );
      if (r === 0)
        process.stderr.write(
          `  group commit: ${((engine.group.stats.commands - before.commands) / (engine.group.stats.batches - before.batches)).toFixed(1)} commands per COMMIT\n`,
        );
      const lone = Math.ceil(n / 4);
      rates.lone.push(
        lone /
          (await timed(async () => {
            for (let i = 0; i < lone; i++) await step();
          })),
      );
      rates.plain.push(
        lone /
          (await timed(async () => {
            for (let i = 0; i < lone; i++) {
              workload.step();
              await Promise.resolve();
            }
          })),
      );
    }
  } finally {
    engine.close();
    raw.close();
  }
  return {
    commands_per_s_full_grouped: {
      ...figure(median(rates.grouped), 'commands/s', median(rates.raw)),
      data: `${WRITERS} concurrent grouped writers × ${n / WRITERS} commands`,
    },
    commands_per_s_full_grouped_1: figure(median(rates.lone), 'commands/s', median(rates.plain)),
  };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}
