import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDemo } from '../src/demo/run.js';
import { figure, type Figure } from './util.js';

/**
 * demo_s: the wall time of the doc-gardener example end to end (`colony demo`), in this process.
 * Baseline: one `colony --help` process, the unit the demo pays for most (its cli-verifier runs
 * `colony <cmd> --help` once per documented command, and every agent run is a node process of the
 * same size) — so the ratio reads "the demo costs N CLI starts". Target: < 120 s.
 */
const BIN = fileURLToPath(new URL('../bin/colony.js', import.meta.url));

export async function benchDemo(dir: string): Promise<Figure> {
  const starts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    starts.push((performance.now() - t0) / 1000);
  }
  const result = await runDemo({ out: join(dir, 'doc-gardener-report.html'), keep: false, timeoutSec: 300 });
  if (!result.summary.sc003.ok)
    throw new Error(`the demo's report misses SC-003: ${result.summary.sc003.failed.join('; ')}`);
  const base = starts.sort((a, b) => a - b)[1]!;
  return {
    ...figure(result.wallMs / 1000, 's', base),
    data: `${result.summary.runs.total} runs, goal ${result.summary.goal.status}`,
  };
}
