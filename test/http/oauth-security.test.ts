import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { revokeToken } from '../../src/actions/principals.js';
import { recordEvidence } from '../../src/actions/reputation.js';
import { fixedClock } from '../../src/clock.js';
import { getAgent, tokensOf } from '../../src/projections/principal-queries.js';
import type { HttpFixture } from '../helpers/mcp-http.js';
import {
  approveInConsole,
  mcpStatus,
  oauthFixture,
  openAuthorization,
  pkcePair,
  tokenRequest,
} from '../helpers/oauth.js';
import { Browser } from './console-client.js';

/**
 * The attacks OAuth must stop, over real sockets, by hand-built requests (a real client library would not
 * send them): PKCE plain or wrong, a replayed code, a foreign redirect, an expired token (a fake engine
 * clock), a replayed refresh token, hostile client metadata, an OAuth token used beyond /mcp, and the
 * agent's own revocation and quarantine reaching its OAuth access.
 */
let f: HttpFixture;
const clock = fixedClock('2026-03-01T09:00:00.000Z');
let browser: Browser;
const REDIRECT = 'http://127.0.0.1/cb';

before(async () => {
  f = await oauthFixture({ clock });
  browser = new Browser(f);
  await browser.signIn(f.ownerToken);
});
after(() => f.close());

async function register(metadata: Record<string, unknown>): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${f.base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(metadata),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

function authorizeUrl(clientId: string, params: Record<string, string>): URL {
  const url = new URL(`${f.base}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: 'http://127.0.0.1:5555/cb',
    state: 's1',
    code_challenge_method: 'S256',
    ...params,
  })) {
    if (v !== '') url.searchParams.set(k, v);
  }
  return url;
}

/** One client for every grant below (registrations are limited to 10 a minute per address). */
let shared: string | null = null;

/** A client, a code approved in the console (as `as`), and the PKCE verifier that redeems it. */
async function approvedCode(
  as = 'owner',
): Promise<{ clientId: string; code: string; verifier: string; redirectUri: string }> {
  shared ??= (await register({ client_name: 'Plain', redirect_uris: [REDIRECT] })).body.client_id as string;
  const clientId = shared;
  const { verifier, challenge } = pkcePair();
  const page = await openAuthorization(
    authorizeUrl(clientId, { code_challenge: challenge, resource: `${f.base}/mcp` }),
    browser.cookie!,
  );
  assert.equal(page.status, 200, page.html);
  const res = await approveInConsole(f, page, browser.cookie!, browser.csrf!, as);
  const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
  return { clientId, code, verifier, redirectUri: 'http://127.0.0.1:5555/cb' };
}

const redeem = (
  c: { clientId: string; code: string; verifier: string; redirectUri: string },
  overrides: Record<string, string> = {},
) =>
  tokenRequest(f, {
    grant_type: 'authorization_code',
    client_id: c.clientId,
    code: c.code,
    code_verifier: c.verifier,
    redirect_uri: c.redirectUri,
    ...overrides,
  });

describe('the authorization request', () => {
  it('refuses PKCE plain, a missing challenge, another response type and another resource — by redirect, with state and iss', async () => {
    const clientId = (await register({ redirect_uris: [REDIRECT] })).body.client_id as string;
    const cases: [Record<string, string>, string][] = [
      [{ code_challenge_method: 'plain', code_challenge: 'a'.repeat(43) }, 'invalid_request'],
      [{ code_challenge: '' }, 'invalid_request'],
      [{ response_type: 'token', code_challenge: pkcePair().challenge }, 'unsupported_response_type'],
      [{ code_challenge: pkcePair().challenge, resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
    ];
    for (const [params, error] of cases) {
      const res = await fetch(authorizeUrl(clientId, params), { redirect: 'manual' });
      assert.equal(res.status, 302, JSON.stringify(params));
      const back = new URL(res.headers.get('location')!);
      assert.equal(`${back.origin}${back.pathname}`, 'http://127.0.0.1:5555/cb');
      assert.deepEqual(
        [back.searchParams.get('error'), back.searchParams.get('state'), back.searchParams.get('iss')],
        [error, 's1', f.base],
      );
    }
  });

  it('never redirects to a URI the client did not register: an error page instead; a loopback redirect may change its port', async () => {
    const clientId = (await register({ redirect_uris: [REDIRECT] })).body.client_id as string;
    const challenge = pkcePair().challenge;
    for (const redirect of ['https://evil.example/cb', 'http://127.0.0.1:5555/other', 'http://localhost:5555/cb']) {
      const page = await openAuthorization(
        authorizeUrl(clientId, { redirect_uri: redirect, code_challenge: challenge }),
      );
      assert.equal(page.status, 400, redirect);
      assert.equal(page.headers.get('location'), null);
      assert.match(page.html, /redirect_uri is not one this client registered/);
    }
    const unknown = await openAuthorization(authorizeUrl('colony-client-nope', { code_challenge: challenge }));
    assert.equal(unknown.status, 400);
    assert.match(unknown.html, /unknown client_id/);
    assert.equal(
      (await openAuthorization(authorizeUrl(clientId, { code_challenge: challenge }))).status,
      200,
      'any port on the registered loopback host',
    );
  });

  it('refuses to register script, plain-http, fragment or non-reverse-DNS private-use redirect URIs', async () => {
    for (const uri of [
      'javascript:alert(1)',
      'http://evil.example/cb',
      'https://ok.example/cb#frag',
      'data:text/html,x',
      'myapp://callback',
    ]) {
      const r = await register({ redirect_uris: [uri] });
      assert.equal(r.status, 400, uri);
      assert.equal(r.body.error, 'invalid_redirect_uri');
    }
    assert.equal(
      (await register({ redirect_uris: ['com.example.app:/oauth/callback'] })).status,
      201,
      "an app's reverse-DNS private-use scheme (RFC 8252 §7.1)",
    );
  });

  it('renders a hostile client name as text under a strict CSP', async () => {
    const hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'&amp;';
    const clientId = (await register({ client_name: hostile, redirect_uris: [REDIRECT] })).body.client_id as string;
    const page = await openAuthorization(authorizeUrl(clientId, { code_challenge: pkcePair().challenge }));
    assert.equal(page.status, 200);
    assert.ok(!page.html.includes('<script>alert(1)'), 'no live script');
    assert.ok(!page.html.includes('<img src=x'), 'no live tag');
    assert.ok(
      page.html.includes('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;amp;'),
    );
    const csp = page.headers.get('content-security-policy')!;
    assert.match(csp, /default-src 'none'; script-src 'nonce-[^']+';/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /form-action 'self' http:\/\/127\.0\.0\.1:5555/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
  });
});

describe('the token endpoint', () => {
  it('a wrong PKCE verifier is invalid_grant and spends the code', async () => {
    const c = await approvedCode();
    const wrong = await redeem(c, { code_verifier: pkcePair().verifier });
    assert.deepEqual([wrong.status, wrong.body.error], [400, 'invalid_grant']);
    assert.match(String(wrong.body.error_description), /PKCE/);
    assert.deepEqual((await redeem(c)).body.error, 'invalid_grant', 'the code was spent by the failed attempt');
  });

  it('a code works once: presented again, it is refused and the grant it produced is revoked', async () => {
    const c = await approvedCode();
    const first = await redeem(c);
    assert.equal(first.status, 200);
    assert.equal(await mcpStatus(f, first.body.access_token as string), 200);
    const replay = await redeem(c);
    assert.deepEqual([replay.status, replay.body.error], [400, 'invalid_grant']);
    assert.equal(await mcpStatus(f, first.body.access_token as string), 401);
  });

  it('the redirect_uri and client_id must be the ones the code was issued for', async () => {
    const c = await approvedCode();
    assert.equal((await redeem(c, { redirect_uri: 'http://127.0.0.1:5556/cb' })).body.error, 'invalid_grant');
    const other = await approvedCode();
    assert.equal((await redeem(other, { client_id: 'colony-client-someone-else' })).body.error, 'invalid_grant');
    const secret = await tokenRequest(f, {
      grant_type: 'authorization_code',
      client_id: c.clientId,
      client_secret: 'x',
      code: 'x',
      code_verifier: 'x',
    });
    assert.deepEqual([secret.status, secret.body.error], [401, 'invalid_client']);
  });

  it('an access token expires after an hour of the engine clock; its refresh token still renews it', async () => {
    const c = await approvedCode();
    const tokens = (await redeem(c)).body;
    assert.equal(await mcpStatus(f, tokens.access_token as string), 200);
    clock.advance(3600_000);
    assert.equal(await mcpStatus(f, tokens.access_token as string), 401);
    const renewed = await tokenRequest(f, {
      grant_type: 'refresh_token',
      client_id: c.clientId,
      refresh_token: tokens.refresh_token as string,
    });
    assert.equal(renewed.status, 200);
    assert.equal(await mcpStatus(f, renewed.body.access_token as string), 200);
  });

  it('a rotated refresh token presented again revokes the whole grant (RFC 9700)', async () => {
    const c = await approvedCode();
    const a = (await redeem(c)).body;
    const b = (
      await tokenRequest(f, {
        grant_type: 'refresh_token',
        client_id: c.clientId,
        refresh_token: a.refresh_token as string,
      })
    ).body;
    assert.equal(await mcpStatus(f, b.access_token as string), 200);
    const reuse = await tokenRequest(f, {
      grant_type: 'refresh_token',
      client_id: c.clientId,
      refresh_token: a.refresh_token as string,
    });
    assert.deepEqual([reuse.status, reuse.body.error], [400, 'invalid_grant']);
    assert.equal(await mcpStatus(f, b.access_token as string), 401, 'the live pair ends too');
    assert.equal(
      (
        await tokenRequest(f, {
          grant_type: 'refresh_token',
          client_id: c.clientId,
          refresh_token: b.refresh_token as string,
        })
      ).body.error,
      'invalid_grant',
    );
  });
});

describe('what an OAuth token is', () => {
  it('reaches /mcp only: no console session, no REST', async () => {
    const token = (await redeem(await approvedCode())).body.access_token as string;
    assert.equal((await new Browser(f).signIn(token)).status, 401);
    assert.equal((await fetch(`${f.base}/api/goals`, { headers: { authorization: `Bearer ${token}` } })).status, 403);
  });

  it("as an agent: its quarantine shows, and revoking the agent's own tokens cuts its OAuth access", async () => {
    const token = (await redeem(await approvedCode(`agent:${f.agentId}`))).body.access_token as string;
    recordEvidence(f.app, getAgent(f.app.engine.db, f.agentId)!, 'default', -1, 'test', { actor: 'user:owner' });
    const me = await (await f.connect(token)).callTool({ name: 'whoami', arguments: {} });
    assert.deepEqual([(me.structuredContent as any).name, (me.structuredContent as any).quarantined], ['worker', true]);
    for (const t of tokensOf(f.app.engine.db, 'agent', f.agentId))
      revokeToken(f.app, 'agent', f.agentId, t.tokenId, 'test', { actor: 'user:owner' });
    assert.equal(await mcpStatus(f, token), 401);
  });

  it('failed token requests are limited per address and client (429 with Retry-After)', async () => {
    let last: Response | null = null;
    for (let i = 0; i < 25 && last?.status !== 429; i++) {
      last = await fetch(`${f.base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&client_id=x&code=guess&code_verifier=guess',
      });
    }
    assert.equal(last!.status, 429);
    assert.ok(Number(last!.headers.get('retry-after')) >= 1);
    // Another client on the same address (every local caller is 127.0.0.1) keeps its own budget.
    const other = await fetch(`${f.base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&client_id=y&code=guess&code_verifier=guess',
    });
    assert.notEqual(other.status, 429);
  });
});
