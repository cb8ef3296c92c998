import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, median, type Figure } from './util.js';

/**
 * cli_start_ms and cli_command_ms: a `colony` process end to end as bin/colony.js runs it — from the
 * bundle in dist/cli/ (scripts/build-cli.mjs), built first so it is current — against the same command
 * from the sources through tsx (COLONY_CLI_SOURCES=1), alternated in the same run. `--version` is the
 * start alone; `goals list` also opens a data dir's store (migrations checked, projections current).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'colony.js');

function ms(args: string[], sources: boolean): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, COLONY_DATA: '', COLONY_CLI_SOURCES: sources ? '1' : '' },
  });
  const took = performance.now() - t0;
  if (r.status !== 0) throw new Error(`colony ${args.join(' ')}: ${r.stderr}`);
  return took;
}

export function benchCliStart(dir: string, rounds: number): Record<string, Figure> {
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-cli.mjs')], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`building the CLI bundle: ${build.stderr}`);
  const data = join(dir, 'cli-start');
  ms(['init', '--data', data], false);
  const pair = (args: string[]) => {
    const times = { bundle: [] as number[], sources: [] as number[] };
    ms(args, false); // warm the page cache for both
    ms(args, true);
    for (let i = 0; i < rounds; i++) {
      times.bundle.push(ms(args, false));
      times.sources.push(ms(args, true));
    }
    return figure(median(times.bundle), 'ms', median(times.sources));
  };
  return {
    cli_start_ms: pair(['--version']),
    cli_command_ms: { ...pair(['goals', 'list', '--data', data]), data: 'goals list on a fresh data dir' },
  };
}
