import assert from 'node:assert/strict';
import { request, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import { createOwner, registerAgent } from '../../src/actions/principals.js';
import { openApp, type App } from '../../src/app.js';
import { mountApi } from '../../src/http/api.js';
import { listen } from '../../src/http/server.js';
import {
  SIGNIN_BACKOFF_MAX_MS,
  SIGNIN_FORGET_MS,
  SIGNIN_FREE_FAILURES,
  SignInBackoff,
} from '../../src/http/session.js';
import { createMcpContext, type McpContext } from '../../src/mcp/context.js';
import { buildToolRegistry } from '../../src/mcp/tools/index.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Console sign-in under a stream of wrong tokens, over real sockets with the backoff's clock in the test's
 * hands: every local caller is 127.0.0.1, and ten bad sign-ins used to lock the owner out for a minute.
 * Now the right token signs in at once whatever came before; wrong ones from that source are counted
 * (five free), then answered ErrRateLimited for a window that doubles up to five minutes; another source
 * keeps its own count, and a quiet source is forgotten.
 */
const scratch = tempDir('colony-signin-');
let app: App;
let ctx: McpContext;
let server: Server;
let api: { close(): void };
let port = 0;
let now = 1_000_000;
let ownerToken = '';
let agentToken = '';

before(async () => {
  app = openApp({ dataDir: scratch.dir });
  const owner = createOwner(app, 'owner', { actor: 'system' });
  ownerToken = owner.token;
  agentToken = registerAgent(
    app,
    {
      name: 'worker',
      ownerId: owner.userId,
      model: 'test-model',
      systemPrompt: 'You do small, careful tasks.',
      toolScope: ['whoami'],
      tier: 'supervised',
      command: null,
      parentId: null,
      spawnDepth: 0,
    },
    { actor: 'user:owner' },
  ).token;
  ctx = createMcpContext(app, buildToolRegistry());
  const http = express();
  api = mountApi(http, ctx, { signInBackoff: new SignInBackoff(() => now) });
  server = await listen(http, '127.0.0.1', 0);
  port = (server.address() as { port: number }).port;
});
after(async () => {
  api.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  ctx.audit.close();
  app.engine.close();
  scratch.cleanup();
});

type Answer = {
  status: number;
  retryAfter: string | undefined;
  code: string | undefined;
  message: string;
  cookie: boolean;
};

/** `POST /api/session {token}` from a given loopback address (the whole 127/8 is this machine). */
function signIn(token: string, from = '127.0.0.1'): Promise<Answer> {
  const body = JSON.stringify({ token });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        method: 'POST',
        path: '/api/session',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          const error = (JSON.parse(text) as { error?: { code: string; message: string } }).error;
          resolve({
            status: res.statusCode!,
            retryAfter: res.headers['retry-after'] as string | undefined,
            code: error?.code,
            message: error?.message ?? '',
            cookie: (res.headers['set-cookie'] ?? []).some((c) => c.startsWith('colony_session=')),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const wrong = (n: number) => `colony_wrong-guess-${n}`;

describe('console sign-in: a per-source backoff that never blocks the right token', () => {
  it('wrong tokens: five free, then a doubling window of ErrRateLimited; the right token signs in at once throughout', async () => {
    const head = app.engine.head().position;
    for (let i = 0; i < SIGNIN_FREE_FAILURES; i += 1) assert.equal((await signIn(wrong(i))).status, 401, `free ${i}`);
    assert.equal((await signIn(wrong(5))).status, 401, 'the first counted failure past the free ones opens 1 s');
    let window = 1;
    for (let round = 0; round < 12; round += 1) {
      for (let i = 0; i < 3; i += 1) {
        const refused = await signIn(wrong(100 + i));
        assert.deepEqual([refused.status, refused.code, refused.retryAfter], [429, 'ErrRateLimited', String(window)]);
        assert.match(refused.message, /a wrong token is refused for \d+ s more \(the right one still signs in\)/);
      }
      const owner = await signIn(ownerToken);
      assert.deepEqual([owner.status, owner.cookie], [200, true], `round ${round}: the owner is never locked out`);
      assert.equal((await signIn(agentToken)).status, 200, 'nor an agent');
      now += window * 1000;
      assert.equal((await signIn(wrong(200 + round))).status, 401, 'after the window: counted again');
      window = Math.min(window * 2, SIGNIN_BACKOFF_MAX_MS / 1000);
    }
    assert.equal(window, 300, 'capped at five minutes');
    assert.equal((await signIn(wrong(300))).retryAfter, '300');
    // Another address of this machine keeps its own count.
    assert.equal((await signIn(wrong(400), '127.0.0.2')).status, 401);
    assert.equal((await signIn(ownerToken, '127.0.0.2')).status, 200);
    // A source quiet for SIGNIN_FORGET_MS starts again with its free failures.
    now += SIGNIN_FORGET_MS;
    for (let i = 0; i <= SIGNIN_FREE_FAILURES; i += 1) assert.equal((await signIn(wrong(500 + i))).status, 401);
    assert.equal((await signIn(wrong(600))).status, 429);
    assert.equal(app.engine.head().position, head, 'sign-ins append nothing to the log');
  });

  it('remembers at most its bound of sources, the least recently failing dropped first', () => {
    let t = 0;
    const backoff = new SignInBackoff(() => t, 3);
    for (const source of ['a', 'b', 'c', 'd', 'e'])
      for (let i = 0; i <= SIGNIN_FREE_FAILURES; i += 1) backoff.fail(source);
    assert.equal(backoff.size, 3);
    assert.equal(backoff.waitSec('a'), 0, 'a was dropped');
    assert.equal(backoff.waitSec('e'), 1);
    t += 500;
    assert.equal(backoff.waitSec('e'), 1, 'rounded up');
    t += 500;
    assert.equal(backoff.waitSec('e'), 0);
  });
});
