import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, type Child } from './child.js';
import { captureModernCall, MODERN } from './mcp-envelope.js';
import type { Job, Load } from './mcp-ext-load.js';
import {
  channelSize,
  FAILED,
  rpc,
  sendMessageFigures,
  sendMessageTarget,
  statelessSendTarget,
  type Checked,
  type Target,
} from './mcp-ext-write.js';
import { figure, median, type Figure } from './util.js';

/**
 * MCP tools/call `whoami` over Streamable HTTP measured from outside the server process: a real
 * `colony serve` and each SDK baseline run in child processes of their own, and autocannon (in a third,
 * bench/mcp-ext-load.ts) drives them over loopback with 10 connections for a fixed time — no client SDK
 * in the loop, so the figures are the servers' alone (bench/mcp.ts has the in-process ones, client included).
 *
 * - 2025-11-25: one `initialize` + `notifications/initialized`, then every call on that session, against
 *   the SDK v1 minimal stateful server (bench/mcp-baseline-http.ts).
 * - 2026-07-28: no session; every call replays the request a pinned SDK v2 client sent (captured by
 *   bench/mcp-envelope.ts), against the SDK v2 minimal stateless server (bench/mcp-baseline-v2.ts).
 *
 * - send_message (bench/mcp-ext-write.ts): a 2025-11-25 session of its own on the same `colony serve`, every
 *   call a message into one channel of the owner; its baseline is Colony's whoami on 2025-11-25. The same
 *   on 2026-07-28 (no session) against Colony's whoami on 2026-07-28: the issue's stateless setting.
 *
 * Both baselines receive exactly the requests Colony does, bearer token included (they ignore it).
 * Rounds alternate baseline, Colony and send_message so drift hits all alike; medians count.
 */
export const COLONY_BIN = fileURLToPath(new URL('../bin/colony.js', import.meta.url));
const BASELINE_CHILD = fileURLToPath(new URL('./mcp-baseline-child.ts', import.meta.url));
export const LOAD_CHILD = fileURLToPath(new URL('./mcp-ext-load.ts', import.meta.url));
const CONNECTIONS = 10;
const LEGACY = '2025-11-25';
// `[<id>]` is autocannon's per-request id: one session carries all 10 connections' calls, and JSON-RPC
// ids in flight on one session must differ (the transport routes each answer by its id).
const LEGACY_CALL = '{"jsonrpc":"2.0","id":"[<id>]","method":"tools/call","params":{"name":"whoami","arguments":{}}}';
// What every answer must be: whoami's identity, not an error that happens to come back fast.
const CHECK = { mustContain: ['"structuredContent"', '"kind":"owner"'], mustNotContain: FAILED };

const KEYS = [
  'baseline2025',
  'colony2025',
  'baseline2026',
  'colony2026',
  'baselineJson',
  'send2025',
  'send2026',
] as const;
type Key = (typeof KEYS)[number];

export interface ExtOptions {
  seconds: number;
  rounds: number;
  warmup: number;
}
/** Runs of 5 s (2 s with --quick) per server and revision, after one warm-up run of each. */
export const EXT_FULL: ExtOptions = { seconds: 5, rounds: 5, warmup: 3 };
export const EXT_QUICK: ExtOptions = { seconds: 2, rounds: 3, warmup: 2 };

export async function benchMcpHttpExt(
  dir: string,
  options: ExtOptions,
  say: (s: string) => void = () => undefined,
): Promise<Record<string, Figure>> {
  const data = join(dir, 'mcp-ext');
  mkdirSync(data, { recursive: true });
  const token = initColony(data);
  const children: Child[] = [];
  let load: ChildProcess | undefined;
  try {
    const start = async (...args: Parameters<typeof startChild>) => {
      const child = await startChild(...args);
      children.push(child);
      return child.match[1]!;
    };
    const colony = `${await start([COLONY_BIN, 'serve', '--data', data, '--port', '0'], /Colony listening on (http:\/\/\S+)/, 'stderr', { COLONY_DATA: '' })}/mcp`;
    const v1 = await start(['--import', 'tsx', BASELINE_CHILD, 'v1'], /^listening (\S+)$/, 'stdout');
    const v2 = await start(['--import', 'tsx', BASELINE_CHILD, 'v2'], /^listening (\S+)$/, 'stdout');
    const v1json = await start(['--import', 'tsx', BASELINE_CHILD, 'v1json'], /^listening (\S+)$/, 'stdout');
    const auth = { authorization: `Bearer ${token}` };
    const modern = await captureModernCall(v2);
    say(`  the 2026-07-28 call replayed: ${JSON.stringify(modern)}`);
    const modernTarget = (url: string): Target => ({
      url,
      headers: { ...modern.headers, ...auth },
      body: modern.body,
      idReplacement: false,
    });
    const whoami: Record<Exclude<Key, 'send2025' | 'send2026'>, Target> = {
      baseline2025: await legacyTarget(v1, auth),
      colony2025: await legacyTarget(colony, auth),
      baseline2026: modernTarget(v2),
      colony2026: modernTarget(colony),
      baselineJson: statelessLegacyTarget(v1json, auth),
    };
    for (const [key, target] of Object.entries(whoami)) await sample(key, target);
    const writer = await legacyTarget(colony, auth);
    const send = await sendMessageTarget(writer);
    const targets: Record<Key, Checked> = {
      baseline2025: { ...whoami.baseline2025, ...CHECK },
      colony2025: { ...whoami.colony2025, ...CHECK },
      baseline2026: { ...whoami.baseline2026, ...CHECK },
      colony2026: { ...whoami.colony2026, ...CHECK },
      baselineJson: { ...whoami.baselineJson, ...CHECK },
      send2025: send.target,
      send2026: statelessSendTarget(whoami.colony2026, send.channelId),
    };
    const generator = fork(LOAD_CHILD, {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'] /* stdout is `colony bench --json`'s */,
    });
    load = generator;
    const drive = (key: Key, seconds: number) =>
      runLoad(generator, key, { ...targets[key], connections: CONNECTIONS, seconds });
    for (const key of KEYS) await drive(key, options.warmup);
    const loads = {
      baseline2025: [],
      colony2025: [],
      baseline2026: [],
      colony2026: [],
      baselineJson: [],
      send2025: [],
      send2026: [],
    } as Record<Key, Load[]>;
    // The channel's size before each send_message round and after the last (read, not summed from the
    // answers: the calls still in flight when a run stops land too, uncounted).
    const sizes: number[] = [];
    for (let r = 0; r < options.rounds; r++) {
      for (const key of KEYS) {
        if (key === 'send2025') sizes.push(await channelSize(writer, send.channelId));
        loads[key].push(await drive(key, options.seconds));
      }
    }
    sizes.push(await channelSize(writer, send.channelId));
    const shape = `${CONNECTIONS} connections × ${options.seconds} s × ${options.rounds} rounds`;
    const stateless = { send: loads.send2026, whoami: loads.colony2026 };
    return {
      ...figures(loads, shape),
      ...sendMessageFigures(loads.send2025, loads.colony2025, stateless, sizes, shape),
    };
  } finally {
    load?.kill();
    await Promise.all(children.map((c) => c.stop()));
  }
}

/** `colony init` on a fresh data dir, as a user would; its JSON carries the owner token. */
export function initColony(data: string, store: string[] = []): string {
  const r = spawnSync(process.execPath, [COLONY_BIN, ...store, 'init', '--data', data, '--json'], {
    encoding: 'utf8',
    env: { ...process.env, COLONY_DATA: '' },
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`colony init failed (${r.status}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { token: string }).token;
}

/** One 2025-11-25 session (initialize, then initialized) and the headers every call on it carries. */
export async function legacyTarget(url: string, auth: Record<string, string>): Promise<Target> {
  const headers = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'colony-bench', version: '0' } },
    }),
  });
  const answer = await init.text();
  const sessionId = init.headers.get('mcp-session-id');
  if (!init.ok || !sessionId || !answer.includes(`"protocolVersion":"${LEGACY}"`))
    throw new Error(`initialize on ${url}: ${init.status} ${answer.slice(0, 300)}`);
  const session = { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY };
  const initialized = await fetch(url, {
    method: 'POST',
    headers: session,
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  await initialized.arrayBuffer();
  if (initialized.status !== 202) throw new Error(`notifications/initialized on ${url}: ${initialized.status}`);
  return { url, headers: session, body: LEGACY_CALL, idReplacement: true };
}

/** A 2025-11-25 call with no session, as a stateless server takes it (every request stands alone). */
function statelessLegacyTarget(url: string, auth: Record<string, string>): Target {
  const headers = {
    ...auth,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': LEGACY,
  };
  return { url, headers, body: LEGACY_CALL, idReplacement: true };
}

/** One call as the load generator will send it, answered with whoami's identity (plain JSON or one SSE event). */
async function sample(key: string, target: Target): Promise<void> {
  const { status, text, json } = await rpc(target, target.body.replace('[<id>]', 'sample'));
  if (status !== 200 || json.result?.isError || json.result?.structuredContent?.kind !== 'owner')
    throw new Error(`${key}: whoami answered ${status} ${text.slice(0, 300)}`);
}

export function runLoad(generator: ChildProcess, key: string, job: Job): Promise<Load> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the load generator exited (${code})`));
    generator.once('exit', onExit);
    generator.once('message', (m: Load | { error: string }) => {
      generator.off('exit', onExit);
      if ('error' in m) return reject(new Error(`${key}: ${m.error}`));
      // A run with any failed, unchecked or lost answer measured something else than the calls it names.
      if (m.non2xx || m.errors || m.timeouts || m.mismatches || m.ok === 0)
        return reject(new Error(`${key}: ${JSON.stringify(m)}`));
      resolve(m);
    });
    generator.send(job);
  });
}

function figures(loads: Record<Key, Load[]>, data: string): Record<string, Figure> {
  const rate = (key: Key) => median(loads[key].map((l) => l.callsPerS));
  const p99 = (key: Key) => median(loads[key].map((l) => l.p99Ms));
  const sdk = rate('baseline2026') / rate('baseline2025');
  return {
    mcp_http_ext_calls_per_s_2025: { ...figure(rate('colony2025'), 'calls/s', rate('baseline2025')), data },
    mcp_http_ext_calls_per_s_2026: { ...figure(rate('colony2026'), 'calls/s', rate('baseline2026')), data },
    // The issue-35 anchor: Colony's stateless leg (one JSON answer per request) against the SDK v1's
    // minimal stateless server in JSON mode, whose calls cost least of the three SDK shapes.
    mcp_http_ext_calls_per_s_stateless: { ...figure(rate('colony2026'), 'calls/s', rate('baselineJson')), data },
    // The stateless revision against the session one on the same Colony: > 1 means a 2026 call costs less.
    // The SDK baselines' own ratio goes in `data`, to tell what the revision costs from what Colony adds.
    mcp_http_ext_2026_vs_2025: {
      ...figure(rate('colony2026'), 'calls/s', rate('colony2025')),
      data: `SDK minimal servers alone: ${sdk.toFixed(3)} (${MODERN} v2 stateless ÷ ${LEGACY} v1 stateful)`,
    },
    mcp_http_ext_p99_ms_2025: { ...figure(p99('colony2025'), 'ms', p99('baseline2025')), data },
    mcp_http_ext_p99_ms_2026: { ...figure(p99('colony2026'), 'ms', p99('baseline2026')), data },
  };
}
