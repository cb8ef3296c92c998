import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, type Figure } from './util.js';

/**
 * mcp_session_flood_rss_mb: a principal that may only call `whoami` sends `initialize` over Streamable
 * HTTP again and again (each one an MCP server of its own on the other side). The server runs in a
 * child process (bench/mcp-sessions-child.ts) so its RSS is its own, measured after a full GC: the
 * value is the highest RSS seen after every tenth of the flood, the baseline the RSS of the same server
 * idle (warmed up by a few sessions, all closed again) just before. With the session caps the ratio
 * stays near 1; without them it grew with every initialize (5,000: 153 → 392 MB, held for 30 minutes).
 */
const CHILD = fileURLToPath(new URL('./mcp-sessions-child.ts', import.meta.url));
const WIDTH = 10; // initializes in flight at once
const MB = 1024 * 1024;

interface Ready {
  base: string;
  ownerToken: string;
  agentToken: string;
}
interface Rss {
  rss: number;
  sessions: number;
}

export async function benchMcpSessionFlood(dir: string, initializes: number): Promise<Figure> {
  const data = join(dir, 'mcp-sessions');
  mkdirSync(data, { recursive: true });
  const child = fork(CHILD, [data], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-4000);
  });
  try {
    const ready = await reply<Ready>(child, null, () => stderr);
    const rss = () => reply<Rss>(child, 'rss', () => stderr);
    // Warm-up: the code paths of a session (SDK, every tool's schema) are loaded and compiled once.
    await close(ready, ready.ownerToken, await open(ready, ready.ownerToken, 20));
    const idle = await rss();
    let peak = idle;
    for (let done = 0, step = Math.ceil(initializes / 10); done < initializes; done += step) {
      await open(ready, ready.agentToken, Math.min(step, initializes - done));
      const now = await rss();
      if (now.rss > peak.rss) peak = now;
    }
    const last = await rss();
    return {
      ...figure(peak.rss / MB, 'MB', idle.rss / MB),
      data: `${initializes.toLocaleString('en-US')} initializes; ${last.sessions} sessions left open`,
    };
  } finally {
    child.send('stop');
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => (clearTimeout(kill), resolve()));
    });
  }
}

/** Sends `message` (or nothing) and waits for the child's next message; a child that dies says why. */
function reply<T>(child: ChildProcess, message: string | null, stderr: () => string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`the session-flood server exited (${code}): ${stderr().trim().split('\n').pop()}`));
    child.once('exit', onExit);
    child.once('message', (m) => {
      child.off('exit', onExit);
      resolve(m as T);
    });
    if (message !== null) child.send(message);
  });
}

const headers = (token: string, sessionId?: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${token}`,
  ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } : {}),
});
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'flood', version: '0' } },
});

/** `n` raw initializes, WIDTH at a time (a raw client: nothing of the SDK's client state to hold). */
async function open(ready: Ready, token: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += WIDTH) {
    ids.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(WIDTH, n - i) }, async () => {
          const res = await fetch(`${ready.base}/mcp`, { method: 'POST', headers: headers(token), body: INITIALIZE });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`initialize answered ${res.status}`);
          return res.headers.get('mcp-session-id')!;
        }),
      )),
    );
  }
  return ids;
}

async function close(ready: Ready, token: string, ids: readonly string[]): Promise<void> {
  for (const id of ids)
    await (await fetch(`${ready.base}/mcp`, { method: 'DELETE', headers: headers(token, id) })).arrayBuffer();
}
