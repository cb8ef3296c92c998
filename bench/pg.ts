import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { pgTarget } from '../src/engine/pg/target.js';
import { figure, median, type Figure } from './util.js';

/**
 * Commands/s on the PostgreSQL store with 1, 2 and 4 nodes (processes), each with WORKERS callers, tenants
 * spread over them — against pgbench's built-in simple-update transactions/s (`-N`) with the same number
 * of clients on the same server in the same run. And the same nodes all on one tenant, whose appends
 * serialize on its chain: the figure that shows where one tenant's throughput ends.
 */
const NODE = fileURLToPath(new URL('./pg-node.ts', import.meta.url));
const WORKERS = 4;

export interface PgBenchOptions {
  seconds: number;
  rounds: number;
}

export async function benchPostgres(
  url: string,
  options: PgBenchOptions,
  say: (s: string) => void,
): Promise<Record<string, Figure>> {
  const target = pgTarget(url);
  const schema = `bench_${process.pid}`;
  const store = withSchema(url, schema);
  const pgbenchEnv = { ...process.env, PGOPTIONS: `-c search_path=${schema}` };
  const admin = new pg.Client({ connectionString: target.connectionString });
  await admin.connect();
  const results: Record<string, Figure> = {};
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    say('  pgbench -i (scale 4)…');
    execFileSync('pgbench', ['-i', '-q', '-s', '4', target.connectionString], { env: pgbenchEnv, stdio: 'ignore' });
    const curve: string[] = [];
    for (const nodes of [1, 2, 4]) {
      const clients = nodes * WORKERS;
      const rates = { colony: [] as number[], pgbench: [] as number[] };
      for (let r = 0; r < options.rounds; r++) {
        rates.pgbench.push(pgbenchTps(target.connectionString, clients, options.seconds, pgbenchEnv));
        rates.colony.push(await colonyRate(store, nodes, options.seconds, (n) => [`n${n}r${r}`, String(WORKERS)]));
      }
      const f = figure(median(rates.colony), 'commands/s', median(rates.pgbench));
      results[`pg_commands_per_s_nodes_${nodes}`] = {
        ...f,
        data: `${nodes} node(s) × ${WORKERS} callers, ${nodes * WORKERS} tenants`,
      };
      curve.push(`${nodes}: ${f.value}/s (${f.ratio} of pgbench's ${f.baseline}/s)`);
      say(`  ${nodes} node(s): ${curve[curve.length - 1]}`);
    }
    const one = { colony: [] as number[], pgbench: [] as number[] };
    for (let r = 0; r < options.rounds; r++) {
      one.pgbench.push(pgbenchTps(target.connectionString, 2 * WORKERS, options.seconds, pgbenchEnv));
      one.colony.push(await colonyRate(store, 2, options.seconds, () => [`one${r}`, '1']));
    }
    results.pg_commands_per_s_one_tenant = {
      ...figure(median(one.colony), 'commands/s', median(one.pgbench)),
      data: `2 nodes × ${WORKERS} callers, all on 1 tenant`,
    };
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
  return results;
}

function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('schema', schema);
  return u.href;
}

function pgbenchTps(conn: string, clients: number, seconds: number, env: NodeJS.ProcessEnv): number {
  const out = execFileSync('pgbench', ['-N', '-n', '-c', String(clients), '-j', '2', '-T', String(seconds), conn], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out);
  if (!tps) throw new Error(`pgbench printed no tps:\n${out}`);
  return Number(tps[1]);
}

/** Starts `nodes` node processes, lets them go at once, and sums their commands over the window. */
async function colonyRate(
  url: string,
  nodes: number,
  seconds: number,
  tenantsOf: (n: number) => [string, string],
): Promise<number> {
  const procs = Array.from({ length: nodes }, (_, n) => {
    const [prefix, tenants] = tenantsOf(n);
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', NODE, url, `node${n}`, String(WORKERS), String(seconds), prefix, tenants],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const lines = createInterface({ input: proc.stdout! });
    const ready = new Promise<void>((resolve) => lines.once('line', () => resolve()));
    const done = new Promise<number>((resolve, reject) => {
      lines.on('line', (l) => l.startsWith('{') && resolve((JSON.parse(l) as { commands: number }).commands));
      proc.once('exit', (code) => code !== 0 && reject(new Error(`a bench node exited with ${code}`)));
    });
    return { proc, ready, done };
  });
  try {
    await Promise.all(procs.map((p) => p.ready));
    for (const p of procs) p.proc.stdin!.write('go\n');
    const counts = await Promise.all(procs.map((p) => p.done));
    return counts.reduce((a, b) => a + b, 0) / seconds;
  } finally {
    for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
  }
}
