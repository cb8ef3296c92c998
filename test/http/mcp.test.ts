import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createToken, revokeToken, rotateToken } from '../../src/actions/principals.js';
import { openApp } from '../../src/app.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/** /mcp over real sockets: authentication, scopes, sessions, body limits and Host validation. */
let f: HttpFixture;
before(async () => {
  f = await httpFixture();
});
after(() => f.close());

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${f.base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

describe('/mcp authentication', () => {
  it('answers 401 with WWW-Authenticate when the token is missing or unknown', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer colony_not-a-token' },
      { authorization: 'Basic abc' },
    ] as Record<string, string>[]) {
      const res = await post(initialize, headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_(token|request)"/);
      assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    }
  });

  it('answers 403 insufficient_scope for a token without the mcp scope', async () => {
    const apiOnly = createToken(f.app, 'user', 1, 'ui only', ['api'], { actor: 'user:owner' });
    const res = await post(initialize, { authorization: `Bearer ${apiOnly}` });
    assert.equal(res.status, 403);
    assert.match(res.headers.get('www-authenticate') ?? '', /error="insufficient_scope".*scope="mcp"/);
  });

  it('refuses a revoked token with 401 on the very next request of an open session', async () => {
    const token = createToken(f.app, 'user', 1, 'short-lived', ['mcp'], { actor: 'user:owner' });
    const client = await f.connect(token);
    assert.equal((await client.callTool({ name: 'whoami', arguments: {} })).isError, undefined);
    const tokenId = (
      (await client.callTool({ name: 'whoami', arguments: {} })).structuredContent as { token_id: number }
    ).token_id;
    const owner = await f.connect(f.ownerToken);
    const ask = await owner.callTool({ name: 'revoke_token', arguments: { token_id: tokenId, reason: 'lost laptop' } });
    const confirm = (ask.structuredContent as { confirm_token: string }).confirm_token;
    const done = await owner.callTool({
      name: 'revoke_token',
      arguments: { token_id: tokenId, reason: 'lost laptop', confirmation_token: confirm },
    });
    assert.deepEqual(done.structuredContent, { token_id: tokenId, principal: 'user:owner', revoked: true });
    await assert.rejects(client.callTool({ name: 'whoami', arguments: {} }), /invalid_token/);
  });

  it('notices a revocation made by another process on the next request (no stale cached caller)', async () => {
    const token = createToken(f.app, 'user', 1, 'elsewhere', ['mcp'], { actor: 'user:owner' });
    const client = await f.connect(token);
    const { token_id } = (await client.callTool({ name: 'whoami', arguments: {} })).structuredContent as {
      token_id: number;
    };
    const other = openApp({ dataDir: f.app.dataDir });
    try {
      assert.equal(revokeToken(other, 'user', 1, token_id, 'revoked from the CLI', { actor: 'user:owner' }), true);
    } finally {
      other.engine.close();
    }
    await assert.rejects(client.callTool({ name: 'whoami', arguments: {} }), /invalid_token/);
  });

  it('refuses a session id used by another principal', async () => {
    const owner = await f.connect(f.ownerToken);
    await owner.listTools();
    const sessionId = (owner.transport as { sessionId?: string }).sessionId!;
    const res = await post(
      { jsonrpc: '2.0', id: 5, method: 'tools/list' },
      { authorization: `Bearer ${f.agentToken}`, 'mcp-session-id': sessionId },
    );
    assert.equal(res.status, 403);
    assert.match(JSON.stringify(await res.json()), /another principal/);
  });
});

describe('/mcp transport', () => {
  it('refuses a body over 4 MiB with a JSON error, appends nothing and writes one audit row', async () => {
    const events = f.eventCount();
    const audited = f.ctx.audit.count();
    const big = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'whoami', arguments: { pad: 'x'.repeat(4.5 * 1024 * 1024) } },
    };
    const res = await post(big, { authorization: `Bearer ${f.ownerToken}` });
    assert.equal(res.status, 413);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.match(JSON.stringify(await res.json()), /larger than 4mb/);
    assert.equal(f.eventCount(), events);
    assert.equal(f.ctx.audit.count(), audited + 1);
    assert.deepEqual(((r) => [r.principal, r.outcome, r.errorCode])(f.ctx.audit.query({ limit: 1 })[0]!), [
      'user:owner',
      'error',
      'ErrBodyTooLarge',
    ]);
  });

  it('answers malformed JSON with a JSON-RPC parse error', async () => {
    const res = await fetch(`${f.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${f.ownerToken}` },
      body: '{"jsonrpc":',
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32700);
  });

  it('needs an initialize request to open a session, and a known session id for GET and DELETE', async () => {
    const auth = { authorization: `Bearer ${f.ownerToken}` };
    assert.equal((await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, auth)).status, 400);
    // A GET without a session is not a 2025 stream: the 2026-07-28 leg has no GET, and says so (405).
    assert.equal((await fetch(`${f.base}/mcp`, { headers: auth })).status, 405);
    assert.equal(
      (await fetch(`${f.base}/mcp`, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': 'nope' } })).status,
      404,
    );
    assert.equal((await fetch(`${f.base}/mcp`, { method: 'PUT', headers: auth })).status, 405);
  });

  it('ends a session on DELETE', async () => {
    const client = await f.connect(f.ownerToken);
    await client.listTools();
    const transport = client.transport as unknown as { sessionId?: string; terminateSession(): Promise<void> };
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const res = await post(
      { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      { authorization: `Bearer ${f.ownerToken}`, 'mcp-session-id': sessionId },
    );
    assert.equal(res.status, 404);
  });

  it('refuses a Host header that is not loopback (DNS rebinding)', async () => {
    const { port } = new URL(f.base);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: { host: 'evil.example', 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(initialize));
    });
    assert.equal(status, 403);
  });

  it('keeps working for the owner after a rotation, with the new token only', async () => {
    const fresh = rotateToken(f.app, 'user', 1, { actor: 'user:owner' });
    const client = await f.connect(fresh);
    assert.equal(
      ((await client.callTool({ name: 'whoami', arguments: {} })).structuredContent as { name: string }).name,
      'owner',
    );
    assert.equal((await post(initialize, { authorization: `Bearer ${f.ownerToken}` })).status, 401);
    f.ownerToken = fresh;
  });
});
