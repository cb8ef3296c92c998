import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { colony } from '../helpers/cli.js';
import type { HttpFixture } from '../helpers/mcp-http.js';
import {
  finishAuthorization,
  mcpStatus,
  MemoryProvider,
  oauthFixture,
  pollDecision,
  startAuthorization,
  type AuthorizationPage,
} from '../helpers/oauth.js';
import { Browser, type Body } from './console-client.js';

/**
 * The console's OAuth routes over real sockets (`/api/oauth/*`, api-oauth.ts): the owner sees the
 * requests waiting in the serving process and decides them with the session cookie and CSRF token — the
 * waiting page's status poll then hands out the redirect, and the code redeemed acts as the identity
 * chosen — lists the applications with their grants exactly as `colony oauth clients --json` does, and
 * revokes a grant or a whole client (its token refused on /mcp at once). An agent's session, a missing
 * CSRF token and every wrong input are refused with nothing appended to the log.
 */
let f: HttpFixture;
let owner: Browser;
let worker: Browser;
const HOSTILE = '<img src=x onerror="alert(1)"> "Trusted" App';

before(async () => {
  f = await oauthFixture({ agentTools: ['whoami', 'read_inbox'] });
  owner = new Browser(f);
  await owner.signIn(f.ownerToken);
  worker = new Browser(f);
  await worker.signIn(f.agentToken);
});
after(() => f.close());

const waitingCount = async (): Promise<number> => (await owner.json('/oauth/requests')).waiting as number;
const whoami = async (token: string) =>
  (await (await f.connect(token)).callTool({ name: 'whoami', arguments: {} })).structuredContent as {
    kind: string;
    name: string;
  };
const lastOAuthEvent = () =>
  f.app.engine.db
    .prepare(
      `SELECT type, json_extract(meta, '$.actor') AS actor, data FROM es_events WHERE stream_id LIKE 'oauth-approval-%' ORDER BY position DESC LIMIT 1`,
    )
    .get() as { type: string; actor: string; data: string };

/** An application asks (no console cookie: it arrived cross-site) and the owner approves it in the console as `as`; its access token. */
async function approvedToken(
  as: string,
  name = 'Console-approved',
): Promise<{ token: string; provider: MemoryProvider }> {
  const provider = new MemoryProvider('http://127.0.0.1:53682/callback', name);
  const page = await startAuthorization(f, provider);
  await owner.json(`/oauth/requests/${page.userCode}/approve`, { method: 'POST', body: { as } });
  const decision = await pollDecision(f, page.requestId);
  assert.equal(decision.status, 'approved');
  await finishAuthorization(f, provider, decision.redirect!);
  return { token: provider.saved!.access_token, provider };
}

describe('pending authorization requests in the console', () => {
  let page: AuthorizationPage;
  let provider: MemoryProvider;

  it('the waiting page without the console cookie points to the console with a plain same-origin link', async () => {
    provider = new MemoryProvider('http://127.0.0.1:53682/callback', HOSTILE);
    page = await startAuthorization(f, provider);
    assert.doesNotMatch(page.html, /<form/);
    assert.match(
      page.html,
      new RegExp(
        `Approve it in the Colony console under <a href="/oauth" target="_blank" rel="noopener">OAuth apps</a>, or run\\s+<code>colony oauth approve ${page.userCode}</code>`,
      ),
    );
  });

  it('never lists codes: the owner finds the request by the code its page shows, with everything the client chose as data, and approves it', async () => {
    const list = await owner.json('/oauth/requests');
    assert.deepEqual(Object.keys(list), ['waiting'], 'how many wait, never which');
    assert.ok((list.waiting as number) >= 1);
    assert.doesNotMatch(JSON.stringify(list), new RegExp(page.userCode));
    const listed = await owner.json(`/oauth/requests/${page.userCode}`);
    assert.deepEqual(
      { ...listed, created_at: undefined, expires_at: undefined },
      {
        code: page.userCode,
        client_id: provider.info!.client_id,
        client_name: HOSTILE,
        client_kind: 'dcr',
        redirect_host: '127.0.0.1:53682',
        scopes: ['mcp'],
        created_at: undefined,
        expires_at: undefined,
      },
    );
    assert.equal(Date.parse(listed.expires_at) - Date.parse(listed.created_at), 10 * 60_000);

    await owner.error(
      `/oauth/requests/${page.userCode}/approve`,
      { method: 'POST', body: {}, csrf: null },
      403,
      'ErrCsrf',
    );
    await owner.error(
      `/oauth/requests/${page.userCode}/approve`,
      { method: 'POST', body: {}, origin: 'https://claude.ai' },
      403,
      'ErrCsrf',
    );
    const before = f.eventCount();
    // Typed as a person would: lower case, no dash.
    const approved = await owner.json(`/oauth/requests/${page.userCode.toLowerCase().replace('-', '')}/approve`, {
      method: 'POST',
      body: { as: 'owner' },
    });
    assert.deepEqual(
      { ...approved, approval_id: 0 },
      { code: page.userCode, status: 'approved', as: 'owner', approval_id: 0 },
    );
    assert.equal(f.eventCount(), before + 1, 'one event: the decision');
    const event = lastOAuthEvent();
    assert.equal(event.type, 'OAuthAuthorizationApproved');
    assert.equal(event.actor, 'user:owner');
    assert.equal(JSON.parse(event.data).via, 'console');

    const decision = await pollDecision(f, page.requestId, 0);
    assert.equal(decision.status, 'approved', 'settled by the approval itself: the first poll has the redirect');
    assert.ok(decision.redirect!.startsWith('http://127.0.0.1:53682/callback?code='), decision.redirect);
    await finishAuthorization(f, provider, decision.redirect!);
    const me = await whoami(provider.saved!.access_token);
    assert.deepEqual([me.kind, me.name], ['owner', 'owner']);
    await owner.error(`/oauth/requests/${page.userCode}`, {}, 409, 'ErrOAuthDecided');
    await owner.error(`/oauth/requests/${page.userCode}/deny`, { method: 'POST', body: {} }, 409, 'ErrOAuthDecided');
  });

  it('denies a request: the application is sent access_denied', async () => {
    const denied = await startAuthorization(f, new MemoryProvider('http://127.0.0.1:53682/callback', 'Denied app'));
    const r = await owner.json(`/oauth/requests/${denied.userCode}/deny`, { method: 'POST' });
    assert.deepEqual([r.code, r.status], [denied.userCode, 'denied']);
    assert.equal(lastOAuthEvent().type, 'OAuthAuthorizationDenied');
    const decision = await pollDecision(f, denied.requestId, 0);
    assert.equal(decision.status, 'denied');
    assert.equal(new URL(decision.redirect!).searchParams.get('error'), 'access_denied');
  });

  it("refuses an agent's session, an OAuth token, unknown codes and wrong inputs, writing nothing; the request keeps waiting", async () => {
    const asking = await startAuthorization(f, new MemoryProvider('http://127.0.0.1:53682/callback', 'Still waiting'));
    const code = asking.userCode;
    for (const [path, method] of [
      ['/oauth/requests', 'GET'],
      [`/oauth/requests/${code}`, 'GET'],
      [`/oauth/requests/${code}/approve`, 'POST'],
      [`/oauth/requests/${code}/deny`, 'POST'],
      ['/oauth/clients', 'GET'],
      ['/oauth/grants/1/revoke', 'POST'],
      ['/oauth/clients/x/revoke', 'POST'],
    ] as const) {
      await worker.error(path, { method, body: method === 'POST' ? {} : undefined }, 403, 'ErrForbidden');
    }
    await owner.error('/oauth/requests/ABCD-EFGH/approve', { method: 'POST', body: {} }, 404, 'ErrNotFound');
    await owner.error('/oauth/requests/ABCD-EFGH/deny', { method: 'POST', body: {} }, 404, 'ErrNotFound');
    await owner.error('/oauth/requests/not-a-code/approve', { method: 'POST', body: {} }, 400, 'ErrInvalidInput');
    await owner.error(
      `/oauth/requests/${code}/approve`,
      { method: 'POST', body: { as: 'agent:nobody' } },
      404,
      'ErrNotFound',
    );
    await owner.error(
      `/oauth/requests/${code}/approve`,
      { method: 'POST', body: { as: 'user:owner' } },
      400,
      'ErrInvalidInput',
    );
    await owner.error(
      `/oauth/requests/${code}/approve`,
      { method: 'POST', body: { as: 'owner', scope: 'everything' } },
      400,
      'ErrInvalidInput',
    );
    await owner.error(
      `/oauth/requests/${code}/deny`,
      { method: 'POST', body: { reason: 'x' } },
      400,
      'ErrInvalidInput',
    );
    assert.equal((await owner.json(`/oauth/requests/${code}`)).code, code, 'nothing decided it');
    assert.ok((await waitingCount()) >= 1);
    assert.equal((await pollDecision(f, asking.requestId, 0)).status, 'pending');

    const { token } = await approvedToken('owner', 'Token holder');
    const refused = await owner.send('/oauth/requests', { anonymous: true, bearer: token });
    assert.equal(refused.status, 403, 'an OAuth access token has no api scope');
  });
});

describe('applications and their grants in the console', () => {
  it('lists clients as `colony oauth clients --json` does, revokes a grant and a client: their tokens get 401 on /mcp', async () => {
    const asAgent = await approvedToken('agent:worker', 'Agent app');
    const me = await whoami(asAgent.token);
    assert.deepEqual([me.kind, me.name], ['agent', 'worker']);
    const second = await approvedToken('owner', 'Agent app');
    const clients = (await owner.json('/oauth/clients')).clients as Body[];
    const cli = colony(['--data', f.app.dataDir, 'oauth', 'clients', '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(clients, JSON.parse(cli.stdout), 'one view for the console and the CLI');
    const mine = clients.find((c) => c.client_id === asAgent.provider.info!.client_id)!;
    assert.deepEqual(
      mine.grants.map((g: Body) => [g.as, g.status]),
      [['agent:worker', 'active']],
    );

    const grantId = mine.grants[0].grant_id as number;
    assert.deepEqual(await owner.json(`/oauth/grants/${grantId}/revoke`, { method: 'POST' }), {
      grant_id: grantId,
      revoked: true,
    });
    assert.equal(await mcpStatus(f, asAgent.token), 401, 'refused on the next request');
    const before = f.eventCount();
    assert.deepEqual(await owner.json(`/oauth/grants/${grantId}/revoke`, { method: 'POST' }), {
      grant_id: grantId,
      revoked: false,
    });
    assert.equal(f.eventCount(), before, 'revoking twice writes nothing');
    await owner.error('/oauth/grants/9999/revoke', { method: 'POST' }, 404, 'ErrNotFound');
    await owner.error('/oauth/grants/x/revoke', { method: 'POST' }, 400, 'ErrInvalidInput');

    const clientId = second.provider.info!.client_id;
    assert.equal(await mcpStatus(f, second.token), 200);
    const revoked = await owner.json(`/oauth/clients/${encodeURIComponent(clientId)}/revoke`, { method: 'POST' });
    assert.deepEqual(revoked.client_id, clientId);
    assert.equal(revoked.revoked_grants.length, 1);
    assert.equal(await mcpStatus(f, second.token), 401);
    const gone = (await owner.json('/oauth/clients')).clients.find((c: Body) => c.client_id === clientId);
    assert.equal(gone.status, 'no live grant');
    // A metadata-document client id is a URL: it travels encoded in the path and comes back decoded.
    const unknown = await owner.error(
      `/oauth/clients/${encodeURIComponent('https://evil.example/client.json')}/revoke`,
      { method: 'POST' },
      404,
      'ErrNotFound',
    );
    assert.equal(unknown.error.details.client_id, 'https://evil.example/client.json');
  });
});
