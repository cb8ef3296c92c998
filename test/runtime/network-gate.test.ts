import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createOwner } from '../../src/actions/principals.js';
import { openApp, type App } from '../../src/app.js';
import { createHttpApp, listen, type HttpApp } from '../../src/http/server.js';
import { createMcpContext, type McpContext } from '../../src/mcp/context.js';
import { buildToolRegistry } from '../../src/mcp/tools/index.js';
import { GATE_SOCKET, RunSockets } from '../../src/runtime/network-gate.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * A confined run's gate (its Unix socket) in front of a real Colony HTTP server. The gate used to check
 * the normalized path (`new URL(target).pathname`) and forward the raw target, which Colony's router reads
 * as it is: `/api/x/../../mcp` passed the check as `/mcp` and was routed to `/api`, `/apps/1/../../mcp` to
 * the web apps, `/assets/../mcp` to the static files. Every target Colony sees now is exactly one the gate
 * allowed, written in normal form.
 */
const scratch = tempDir('colony-gate-');
let app: App;
let ctx: McpContext;
let http: HttpApp;
let server: Server;
let gate: RunSockets;
let token: string;
/** Every request target Colony's server received, in order. */
const seen: string[] = [];

before(async () => {
  app = openApp({ dataDir: scratch.dir });
  token = createOwner(app, 'owner', { actor: 'system' }).token;
  ctx = createMcpContext(app, buildToolRegistry());
  http = createHttpApp(app.engine, ctx);
  server = await listen(http.app, '127.0.0.1', 0);
  server.prependListener('request', (req: { url?: string }) => seen.push(req.url ?? ''));
  gate = await RunSockets.open(new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`), null);
});
after(async () => {
  gate.close();
  await http.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  ctx.audit.close();
  app.engine.close();
  scratch.cleanup();
});

type Answer = { status: number; head: string; text: string };

/**
 * One raw HTTP/1.1 request over the gate's socket, the target written byte for byte (no client normalizes
 * it), `Connection: close`. The answer is read up to its Content-Length, so a socket held open after it
 * does not stall the test; the next request then follows at once, as a run's would.
 */
function throughGate(method: string, target: string, body = ''): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(join(gate.dir, GATE_SOCKET));
    let out = '';
    const done = (ended: boolean) => {
      const at = out.indexOf('\r\n\r\n');
      if (at < 0 && !ended) return;
      const head = out.slice(0, Math.max(at, 0));
      const text = at < 0 ? '' : out.slice(at + 4);
      const length = /^content-length: (\d+)$/im.exec(head)?.[1];
      if (!ended && (length === undefined || Buffer.byteLength(text) < Number(length))) return;
      socket.destroy();
      resolve({ status: Number(head.split(' ')[1]), head, text });
    };
    socket.on('data', (chunk) => {
      out += chunk;
      done(false);
    });
    socket.on('error', reject);
    socket.on('end', () => done(true));
    const headers = [
      'host: 127.0.0.1:7070',
      'connection: close',
      `authorization: Bearer ${token}`,
      'content-type: application/json',
      'accept: application/json, text/event-stream',
      `content-length: ${Buffer.byteLength(body)}`,
    ];
    socket.write(`${method} ${target} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n${body}`);
  });
}

describe('the network gate forwards only what it checked', () => {
  it('refuses every target that is /mcp only once normalized, and Colony never sees one', async () => {
    const swaps = [
      '/api/x/../../mcp',
      '/api/goals/../../mcp',
      '/api/x/%2e%2e/%2e%2e/mcp',
      '/api/x/%2E%2E/.%2e/mcp',
      '/apps/1/../../mcp',
      '/assets/../mcp',
      '/health/../mcp',
      '/.well-known/oauth-authorization-server/../../mcp',
      '/api\\x\\..\\..\\mcp',
      '//api/../mcp',
      '//127.0.0.1/mcp',
      '/./mcp',
      '/mcp#/../api/goals',
      '/%6dcp',
      '/mcp/',
      '/mcp%2f..%2fapi%2fgoals',
      '//[x/mcp', // does not parse: used to throw out of the gate's handler and end the process
    ];
    const before = seen.length;
    for (const target of swaps)
      for (const method of ['GET', 'POST']) {
        const res = await throughGate(method, target, method === 'POST' ? '{}' : '');
        assert.equal(res.status, 403, `${method} ${target}: ${res.text}`);
        assert.match(res.text, /a run reaches only \/mcp through its gate/);
      }
    assert.deepEqual(seen.slice(before), [], 'Colony received none of them');
    assert.equal(gate.denied >= swaps.length * 2, true);
  });

  it('still passes /mcp (with a query) and /health, byte for byte as checked, one request after another', async () => {
    const before = seen.length;
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'run', version: '0' } },
    });
    const answers = [
      await throughGate('POST', '/mcp', initialize),
      await throughGate('POST', '/mcp?from=run', initialize),
      await throughGate('GET', '/health'),
      await throughGate('POST', '/mcp', initialize),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200],
      answers.map((a) => a.head).join('\n\n'),
    );
    assert.match(answers[0]!.text, /"protocolVersion":"2025-11-25"/);
    assert.deepEqual(seen.slice(before), ['/mcp', '/mcp?from=run', '/health', '/mcp']);
    // Hop-by-hop headers stay on their hop: Colony's SSE answer says keep-alive, the run asked to close.
    for (const a of answers) assert.doesNotMatch(a.head, /^connection: keep-alive$/im);
    assert.match(answers[0]!.head, /^connection: close$/im);
  });
});
