import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startChild, type Child } from './child.js';
import type { Load } from './mcp-ext-load.js';
import { COLONY_BIN, initColony, legacyTarget, LOAD_CHILD, runLoad } from './mcp-ext.js';
import { sendMessageTarget, type Checked } from './mcp-ext-write.js';
import { figure, median, type Figure } from './util.js';
import { dropStoreSchemas } from '../testkit/pg-schemas.js';

/**
 * MCP calls/s across `colony serve` nodes on PostgreSQL, measured from outside by the same external load
 * generator as bench/mcp-ext.ts (autocannon in processes of its own, one per node driven, all at once):
 * every call a send_message — one command, one transaction on the store — on a session of the node's own.
 *
 * - nodes_1: one node serving one tenant;
 * - nodes_2_one_tenant, nodes_3_one_tenant: two and three nodes serving the same tenant (its chain
 *   serializes their commits; each holds the tenant's lock for one round trip, pg/optimistic.ts);
 * - nodes_2_two_tenants: two nodes, each serving a tenant of its own (they commit in parallel).
 *
 * The baseline is the same load against one `colony serve` on its embedded SQLite store, in the same run;
 * the one-tenant curve is also given against nodes_1 (`…_vs_1`): what a second and a third node add.
 */
export interface PgServeOptions {
  seconds: number;
  rounds: number;
  warmup: number;
}

const CONNECTIONS = 10;

export async function benchPgServe(
  pgUrl: string,
  dir: string,
  options: PgServeOptions,
  say: (s: string) => void = () => undefined,
): Promise<Record<string, Figure>> {
  const schema = `bench_serve_${process.pid}`;
  const store = (tenant: string) => `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}&tenant=${tenant}`;
  const children: Child[] = [];
  const generators: ChildProcess[] = [];
  const node = async (data: string, url: string | null) => {
    const args = [COLONY_BIN, ...(url ? ['--store', url] : []), 'serve', '--data', data, '--port', '0'];
    const child = await startChild(args, /Colony listening on (http:\/\/\S+)/, 'stderr', { COLONY_DATA: '' });
    children.push(child);
    return `${child.match[1]!}/mcp`;
  };
  /** A send_message target on a new session of the node at `mcp`. */
  const target = async (mcp: string, token: string): Promise<Checked> => {
    const session = await legacyTarget(mcp, { authorization: `Bearer ${token}` });
    return (await sendMessageTarget(session)).target;
  };
  try {
    const team = (name: string, url: string | null) => {
      const data = join(dir, 'pg-serve', name);
      mkdirSync(data, { recursive: true });
      return { data, url, token: initColony(data, url ? ['--store', url] : []) };
    };
    const sqlite = team('sqlite', null);
    const a = team('a', store('a'));
    const b = team('b', store('b'));
    const local = await target(await node(sqlite.data, null), sqlite.token);
    const a1 = await node(a.data, a.url);
    const a2 = await node(a.data, a.url);
    const a3 = await node(a.data, a.url);
    const b1 = await node(b.data, b.url);
    const setups = {
      sqlite: [local],
      nodes_1: [await target(a1, a.token)],
      nodes_2_one_tenant: [await target(a1, a.token), await target(a2, a.token)],
      nodes_3_one_tenant: [await target(a1, a.token), await target(a2, a.token), await target(a3, a.token)],
      nodes_2_two_tenants: [await target(a2, a.token), await target(b1, b.token)],
    };
    for (let i = 0; i < 3; i++) {
      const generator = fork(LOAD_CHILD, {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      generators.push(generator);
    }
    /** Every target at once, one generator each: the sum of their rates. */
    const drive = async (key: keyof typeof setups, seconds: number): Promise<number> => {
      const loads: Load[] = await Promise.all(
        setups[key].map((t, i) => runLoad(generators[i]!, key, { ...t, connections: CONNECTIONS, seconds })),
      );
      return loads.reduce((sum, l) => sum + l.callsPerS, 0);
    };
    const keys = Object.keys(setups) as (keyof typeof setups)[];
    for (const key of keys) await drive(key, options.warmup);
    const rates = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<keyof typeof setups, number[]>;
    for (let r = 0; r < options.rounds; r++) {
      for (const key of keys) rates[key].push(await drive(key, options.seconds));
      say(`  round ${r + 1}: ${keys.map((k) => `${k} ${Math.round(rates[k].at(-1)!)}/s`).join(', ')}`);
    }
    const rate = (k: keyof typeof setups) => median(rates[k]);
    const data = `send_message, ${CONNECTIONS} connections per node driven × ${options.seconds} s × ${options.rounds} rounds`;
    const vsSqlite = (k: keyof typeof setups) => ({ ...figure(rate(k), 'calls/s', rate('sqlite')), data });
    const vsOne = (k: keyof typeof setups) => ({ ...figure(rate(k), 'calls/s', rate('nodes_1')), data });
    return {
      pg_mcp_calls_per_s_nodes_1: vsSqlite('nodes_1'),
      pg_mcp_calls_per_s_nodes_2_one_tenant: vsSqlite('nodes_2_one_tenant'),
      pg_mcp_calls_per_s_nodes_3_one_tenant: vsSqlite('nodes_3_one_tenant'),
      pg_mcp_calls_per_s_nodes_2_one_tenant_vs_1: vsOne('nodes_2_one_tenant'),
      pg_mcp_calls_per_s_nodes_3_one_tenant_vs_1: vsOne('nodes_3_one_tenant'),
      pg_mcp_calls_per_s_nodes_2_two_tenants: vsSqlite('nodes_2_two_tenants'),
    };
  } finally {
    for (const g of generators) g.kill();
    await Promise.all(children.map((c) => c.stop()));
    await dropStoreSchemas(pgUrl, schema);
  }
}
