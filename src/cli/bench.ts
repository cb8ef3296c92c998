import type { Command } from 'commander';
import { action, globals } from './shared.js';

/** `colony bench`: the benchmark suite in bench/ (figures as ratios against same-run baselines). */
export function registerBench(program: Command): void {
  program
    .command('bench')
    .description('run the benchmarks: every figure against a baseline measured in the same run')
    .option('--json', 'print one JSON object {name: {value, unit, baseline, ratio, data?}}')
    .option('--quick', 'a smaller run (about a minute; goals_list on 10 goals instead of 100)')
    .action(
      action(async (opts: { json?: boolean; quick?: boolean }, cmd: Command) => {
        const { runBench } = await import('../../bench/index.js');
        const pgUrl = globals(cmd).store ?? process.env.COLONY_TEST_PG ?? null;
        await runBench({ json: opts.json ?? false, quick: opts.quick ?? false, pgUrl });
      }),
    );
}
