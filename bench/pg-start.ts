import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { COLONY_BIN, initColony } from './mcp-ext.js';
import { migrateTo, seedSqliteLog } from './pg-start-data.js';
import { figure, median, type Figure } from './util.js';
import { dropStoreSchemas } from '../testkit/pg-schemas.js';

/**
 * How fast a `colony serve` node of a big PostgreSQL tenant starts, and what it holds in memory. Each size's
 * tenant is a busy team's log built on SQLite and moved by `colony migrate --to` (pg-start-data.ts). A
 * node's first start copies the tenant into its copy file; the figures are the starts after it, which
 * resume the copy (process spawn → "listening").
 *
 * - pg_node_start_s_<size>: against `colony serve` on the SQLite data dir of the same log (its start after
 *   the first, whose chain check walks from the genesis), same run;
 * - pg_node_rss_mb_<size>: the node's RSS after start, against a node of an empty tenant — flat means no
 *   part of the start holds the tenant in memory;
 * - pg_node_first_start_s_<size> (diagnostic): the first start, which copies the whole tenant.
 */
export interface PgStartOptions {
  sizes: number[];
  rounds: number;
}

export async function benchPgStart(
  pgUrl: string,
  dir: string,
  options: PgStartOptions,
  say: (s: string) => void = () => undefined,
): Promise<Record<string, Figure>> {
  const schema = `bench_start_${process.pid}`;
  const store = (tenant: string) => `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}&tenant=${tenant}`;
  const results: Record<string, Figure> = {};
  try {
    const empty = join(dir, 'pg-start', 'empty');
    initColony(empty, ['--store', store('empty')]);
    await startOnce(empty, store('empty')); // the first start makes its copy
    const emptyRss = median(await rounds(options.rounds, () => startOnce(empty, store('empty')), 'rssMb'));
    for (const size of options.sizes) {
      const name = size >= 1_000_000 ? `${size / 1_000_000}m` : `${size / 1000}k`;
      const data = join(dir, 'pg-start', name);
      const t0 = performance.now();
      seedSqliteLog(data, size);
      migrateTo(data, store(`t${name}`), `t${name}`);
      say(
        `  ${size.toLocaleString('en-US')} events seeded and migrated in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      );
      await startOnce(data, null); // SQLite: its first start walks the chain from the genesis
      const first = await startOnce(data, store(`t${name}`));
      say(`  first start of a node (copies the tenant): ${first.seconds.toFixed(1)} s`);
      const sqlite: number[] = [];
      const node: Started[] = [];
      // Alternately, so drift hits both alike.
      for (let r = 0; r < options.rounds; r++) {
        sqlite.push((await startOnce(data, null)).seconds);
        node.push(await startOnce(data, store(`t${name}`)));
      }
      const base = median(sqlite);
      results[`pg_node_start_s_${name}`] = figure(median(node.map((n) => n.seconds)), 's', base);
      results[`pg_node_rss_mb_${name}`] = figure(median(node.map((n) => n.rssMb)), 'MB', emptyRss);
      results[`pg_node_first_start_s_${name}`] = figure(first.seconds, 's', base);
    }
    return results;
  } finally {
    await dropStoreSchemas(pgUrl, schema);
  }
}

interface Started {
  seconds: number;
  rssMb: number;
}

async function rounds<K extends keyof Started>(n: number, start: () => Promise<Started>, key: K): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await start())[key]);
  return out;
}

/**
 * `colony serve` on the data dir (on the store when `url` is given): seconds from spawn to "listening",
 * and the process's RSS a second later; then SIGTERM, awaited.
 */
async function startOnce(data: string, url: string | null): Promise<Started> {
  const args = [
    COLONY_BIN,
    ...(url ? ['--store', url] : []),
    'serve',
    '--data',
    data,
    '--port',
    '0',
    '--sandbox',
    'off',
  ];
  const t0 = performance.now();
  const proc = spawn(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, COLONY_DATA: '' },
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  try {
    const seconds = await new Promise<number>((resolve, reject) => {
      let tail = '';
      createInterface({ input: proc.stderr }).on('line', (line) => {
        tail = `${tail}${line}\n`.slice(-2000);
        if (/listening on http/.test(line)) resolve((performance.now() - t0) / 1000);
      });
      void exited.then(() => reject(new Error(`colony serve exited before listening:\n${tail}`)));
    });
    await new Promise((r) => setTimeout(r, 1000));
    const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
    const rssMb = Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
    return { seconds, rssMb };
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}
