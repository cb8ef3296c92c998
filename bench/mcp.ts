import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createOwner } from '../src/actions/principals.js';
import { openApp } from '../src/app.js';
import { baselineHttp, type Endpoint } from './mcp-baseline-http.js';
import { serveColony } from './serve.js';
import { figure, median, type Figure } from './util.js';

/**
 * MCP tools/call throughput through real SDK clients, each figure against the SDK's own minimal server
 * (bench/mcp-baseline.ts) measured in the same run with the same client code:
 *
 * - mcp_http_calls_per_s: `whoami` over Streamable HTTP, 10 stateful sessions (10 SDK Clients) calling
 *   in parallel for a fixed time. Colony's HTTP app (the one `colony serve` mounts: host check, bearer
 *   auth, sessions, audit) and the baseline (createMcpExpressApp + StreamableHTTPServerTransport, one
 *   McpServer per session) both run in this process, on loopback, sharing its event loop with the clients.
 * - mcp_stdio_calls_per_s: sequential `whoami` calls to a spawned `colony stdio` against the baseline
 *   server spawned the same way (node + tsx, bench/stdio-baseline.ts).
 *
 * Rounds alternate baseline and Colony so drift hits both alike; medians count. The same calls measured
 * from outside the server process, with no client SDK in the loop, are bench/mcp-ext.ts.
 */
const COLONY_BIN = fileURLToPath(new URL('../bin/colony.js', import.meta.url));
const STDIO_BASELINE = fileURLToPath(new URL('./stdio-baseline.ts', import.meta.url));
const SESSIONS = 10;

/** Colony's HTTP surface in-process, on a fresh data dir with an owner. */
async function colonyHttp(dir: string): Promise<Endpoint & { token: string }> {
  const app = openApp({ dataDir: dir });
  const { token } = createOwner(app, 'owner', { actor: 'system' });
  const served = await serveColony(app);
  return {
    url: `${served.base}/mcp`,
    token,
    async close() {
      await served.close();
      app.engine.close();
    },
  };
}

export interface Session {
  client: Client;
  close(): Promise<void>;
}

/** The client side, identical for both servers: connect, list tools (the client then validates outputs). */
export async function openHttpSessions(url: string, headers: Record<string, string>, n: number): Promise<Session[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
      const client = new Client({ name: 'colony-bench', version: '0' });
      await client.connect(transport);
      await client.listTools();
      return {
        client,
        async close() {
          await transport.terminateSession().catch(() => undefined);
          await client.close();
        },
      };
    }),
  );
}

async function callWhoami(client: Client): Promise<void> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  if (result.isError) throw new Error(`whoami failed: ${JSON.stringify(result.content)}`);
}

/** Every session calls back to back until `seconds` have passed; calls per second over all sessions. */
async function drive(sessions: readonly Session[], seconds: number): Promise<number> {
  const started = performance.now();
  const end = started + seconds * 1000;
  let calls = 0;
  await Promise.all(
    sessions.map(async ({ client }) => {
      while (performance.now() < end) {
        await callWhoami(client);
        calls++;
      }
    }),
  );
  return calls / ((performance.now() - started) / 1000);
}

/**
 * One warm-up of each (`run` false), then rounds alternating baseline and Colony (`run` true) so drift
 * hits both alike; the medians count.
 */
async function alternate(
  rounds: number,
  baseline: (run: boolean) => Promise<number>,
  colony: (run: boolean) => Promise<number>,
): Promise<Figure> {
  await baseline(false);
  await colony(false);
  const rates = { colony: [] as number[], baseline: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    rates.baseline.push(await baseline(true));
    rates.colony.push(await colony(true));
  }
  return figure(median(rates.colony), 'calls/s', median(rates.baseline));
}

export async function benchMcpHttp(
  dir: string,
  options: { seconds: number; rounds: number; warmup: number },
): Promise<Figure> {
  const colony = await colonyHttp(mkdirp(join(dir, 'mcp-http')));
  const baseline = await baselineHttp();
  const sessions = { colony: [] as Session[], baseline: [] as Session[] };
  try {
    sessions.colony = await openHttpSessions(colony.url, { Authorization: `Bearer ${colony.token}` }, SESSIONS);
    sessions.baseline = await openHttpSessions(baseline.url, { Authorization: `Bearer ${colony.token}` }, SESSIONS);
    return await alternate(
      options.rounds,
      (run) => drive(sessions.baseline, run ? options.seconds : options.warmup),
      (run) => drive(sessions.colony, run ? options.seconds : options.warmup),
    );
  } finally {
    await Promise.all([...sessions.colony, ...sessions.baseline].map((s) => s.close()));
    await colony.close();
    await baseline.close();
  }
}

/** A stdio server child and its client; the child's stderr is drained (kept for errors), never left to fill. */
async function stdioSession(args: string[], env: Record<string, string>): Promise<Session & { stderr(): string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-4000);
  });
  const client = new Client({ name: 'colony-bench', version: '0' });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`stdio server ${args.join(' ')} did not start: ${(e as Error).message}\n${stderr}`, {
      cause: e,
    });
  }
  await client.listTools();
  return { client, close: () => client.close(), stderr: () => stderr };
}

async function sequential(client: Client, calls: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) await callWhoami(client);
  return calls / ((performance.now() - started) / 1000);
}

export async function benchMcpStdio(
  dir: string,
  options: { calls: number; rounds: number; warmup: number },
): Promise<Figure> {
  const data = mkdirp(join(dir, 'mcp-stdio'));
  const app = openApp({ dataDir: data });
  let token: string;
  try {
    token = createOwner(app, 'owner', { actor: 'system' }).token;
  } finally {
    app.engine.close();
  }
  const colony = await stdioSession([COLONY_BIN, 'stdio', '--data', data], { COLONY_TOKEN: token, COLONY_DATA: '' });
  let baseline: Session | undefined;
  try {
    baseline = await stdioSession(['--import', 'tsx', STDIO_BASELINE], {});
    const base = baseline;
    return await alternate(
      options.rounds,
      (run) => sequential(base.client, run ? options.calls : options.warmup),
      (run) => sequential(colony.client, run ? options.calls : options.warmup),
    );
  } finally {
    await baseline?.close();
    await colony.close();
  }
}

function mkdirp(path: string): string {
  mkdirSync(path, { recursive: true });
  return path;
}
