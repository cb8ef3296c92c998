import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createToken, revokeToken } from '../../src/actions/principals.js';
import { openApp } from '../../src/app.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * tools/call on an open 2025-11-25 session is answered by Colony directly with one JSON body
 * (src/http/mcp-fast-call.ts); everything outside the plain case keeps the SDK transport's answers.
 * Raw requests over real sockets, so the wire format itself is what is checked.
 */
let f: HttpFixture;
let session: Record<string, string>;
before(async () => {
  f = await httpFixture({ agentTools: ['whoami', 'send_message'] });
  session = await openSession(f.ownerToken);
});
after(() => f.close());

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const post = (body: unknown, headers: Record<string, string>) =>
  fetch(`${f.base}/mcp`, { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) });
const call = (id: unknown, name: string, args?: unknown, meta?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, ...(args === undefined ? {} : { arguments: args }), ...(meta === undefined ? {} : { _meta: meta }) },
});

async function openSession(token: string): Promise<Record<string, string>> {
  const auth = { authorization: `Bearer ${token}` };
  const init = await post(
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    },
    auth,
  );
  await init.text();
  const id = init.headers.get('mcp-session-id')!;
  const headers = { ...auth, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).arrayBuffer();
  return headers;
}

/** The JSON-RPC message of an answer, whether a JSON body or one SSE event. */
async function messageOf(res: Response): Promise<{ id: unknown; result?: Record<string, unknown>; error?: unknown }> {
  const text = await res.text();
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const data = text.split('\n').find((l) => l.startsWith('data: '));
    return JSON.parse(data!.slice(6));
  }
  return JSON.parse(text);
}

describe('tools/call on a session, answered as JSON', () => {
  it('answers one JSON body with the session id, the same result as the SDK path, and one audit row', async () => {
    const before = f.ctx.audit.count();
    const res = await post(call('a-1', 'whoami', {}), session);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('mcp-session-id'), session['mcp-session-id']);
    const message = await messageOf(res);
    assert.equal(message.id, 'a-1');
    assert.equal((message.result!.structuredContent as { kind: string }).kind, 'owner');
    // The same call through the SDK transport (a progress token keeps it there) answers the same result.
    const viaSdk = await post(call(7, 'whoami', {}, { progressToken: 'p' }), session);
    assert.match(viaSdk.headers.get('content-type') ?? '', /^text\/event-stream/);
    const sdkMessage = await messageOf(viaSdk);
    assert.equal(sdkMessage.id, 7);
    assert.deepEqual(sdkMessage.result, message.result);
    assert.equal(f.ctx.audit.count(), before + 2);
  });

  it('runs writes through the same pipeline: refusals are tool errors, a write lands once', async () => {
    const unknown = await messageOf(await post(call(2, 'no_such_tool', {}), session));
    assert.equal(unknown.result!.isError, true);
    assert.match(JSON.stringify(unknown.result), /ErrToolNotFound/);
    const bad = await messageOf(await post(call(3, 'whoami', { surprise: 1 }), session));
    assert.equal(bad.result!.isError, true);
    const events = f.eventCount();
    const sent = await messageOf(
      await post(call(4, 'send_message', { to: 'worker', body: '<b>hello</b> from the owner' }), session),
    );
    assert.notEqual(sent.result!.isError, true, JSON.stringify(sent));
    assert.ok(f.eventCount() > events);
  });

  it('leaves the unusual to the SDK transport: bad versions, batches, bad ids, another principal', async () => {
    const badVersion = await post(call(5, 'whoami', {}), { ...session, 'mcp-protocol-version': '1999-01-01' });
    assert.equal(badVersion.status, 400);
    assert.match(await badVersion.text(), /Unsupported protocol version/);
    const noSse = await post(call(6, 'whoami', {}), { ...session, accept: 'application/json' });
    assert.equal(noSse.status, 406);
    const batch = await post([call(8, 'whoami', {})], session);
    // The SDK answers a batch on its stream (SSE), never the fast path's single JSON body.
    assert.match(batch.headers.get('content-type') ?? '', /^text\/event-stream/);
    const badId = await post(call({ not: 'an id' }, 'whoami', {}), session);
    assert.equal(badId.status, 400);
    const agent = { ...session, authorization: `Bearer ${f.agentToken}` };
    assert.equal((await post(call(9, 'whoami', {}), agent)).status, 403);
  });

  it('refuses a token revoked here or by another process on the very next call', async () => {
    for (const where of ['this process', 'another process']) {
      const token = createToken(f.app, 'user', 1, 'brief', ['mcp'], { actor: 'user:owner' });
      const mine = await openSession(token);
      const answer = await messageOf(await post(call(1, 'whoami', {}), mine));
      const tokenId = (answer.result!.structuredContent as { token_id: number }).token_id;
      const app = where === 'this process' ? f.app : openApp({ dataDir: f.app.dataDir });
      try {
        assert.equal(revokeToken(app, 'user', 1, tokenId, 'gone', { actor: 'user:owner' }), true);
      } finally {
        if (app !== f.app) app.engine.close();
      }
      assert.equal((await post(call(2, 'whoami', {}), mine)).status, 401, where);
    }
  });
});
