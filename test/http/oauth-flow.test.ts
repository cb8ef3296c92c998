import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auth } from '@modelcontextprotocol/client';
import { mcpResourceUrl, resourceMetadataUrl } from '../../src/http/oauth.js';
import { dumpTables } from '../helpers/engine.js';
import { colony } from '../helpers/cli.js';
import type { HttpFixture } from '../helpers/mcp-http.js';
import {
  approveInConsole,
  finishAuthorization,
  mcpStatus,
  MemoryProvider,
  oauthFixture,
  openAuthorization,
  pollDecision,
  startAuthorization,
} from '../helpers/oauth.js';
import { Browser } from './console-client.js';

/**
 * OAuth end to end over real sockets with the MCP SDK's own OAuth client: discovery, dynamic
 * registration, the owner's approval (on the page with the console cookie, and with `colony oauth
 * approve` run as a separate process while this one serves), the code exchange, real MCP calls with the
 * access token, refresh with rotation, and revocation taking effect on the very next call.
 */
let f: HttpFixture;
const AGENT_TOOLS = ['read_inbox', 'whoami'];
const oauthTypes = () =>
  (
    f.app.engine.db.prepare(`SELECT type FROM es_events WHERE stream_id LIKE 'oauth-%' ORDER BY position`).all() as {
      type: string;
    }[]
  ).map((r) => r.type);
const toolNames = async (token: string) => (await (await f.connect(token)).listTools()).tools.map((t) => t.name).sort();

before(async () => {
  f = await oauthFixture({ agentTools: AGENT_TOOLS });
});
after(() => f.close());

describe('discovery', () => {
  it('publishes protected-resource metadata at both RFC 9728 URLs and the authorization server metadata (RFC 8414)', async () => {
    assert.equal(resourceMetadataUrl(f.base), `${f.base}/.well-known/oauth-protected-resource/mcp`);
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await fetch(`${f.base}${path}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.deepEqual(await res.json(), {
        resource: mcpResourceUrl(f.base),
        authorization_servers: [f.base],
        scopes_supported: ['mcp'],
        bearer_methods_supported: ['header'],
        resource_name: 'Colony',
      });
    }
    const as = (await (await fetch(`${f.base}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(as.issuer, f.base);
    assert.equal(as.authorization_endpoint, `${f.base}/oauth/authorize`);
    assert.equal(as.token_endpoint, `${f.base}/oauth/token`);
    assert.equal(as.registration_endpoint, `${f.base}/oauth/register`);
    assert.equal(as.revocation_endpoint, `${f.base}/oauth/revoke`);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(as.token_endpoint_auth_methods_supported, ['none']);
    assert.deepEqual(as.grant_types_supported, ['authorization_code', 'refresh_token']);
    assert.equal(as.client_id_metadata_document_supported, true);
    assert.equal(as.authorization_response_iss_parameter_supported, true);
    const preflight = await fetch(`${f.base}/oauth/token`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.status, 204);
  });
});

describe('the owner approves in the console', () => {
  it('registers, approves with the console cookie, calls MCP as the owner, refreshes with rotation, and a revocation is a 401 on the next call', async () => {
    const browser = new Browser(f);
    await browser.signIn(f.ownerToken);
    const before = f.eventCount();
    const provider = new MemoryProvider();
    const page = await startAuthorization(f, provider, browser.cookie!);
    assert.match(provider.info!.client_id, /^colony-client-[0-9a-f]{32}$/);
    assert.equal(f.eventCount(), before, "registering and asking log nothing: only the owner's decision does");
    assert.match(page.html, /Authorize “Test Client”\?/);
    assert.match(page.html, /<button type="submit" name="decision" value="approve">Approve<\/button>/);
    assert.match(page.html, /<option value="agent:\d+">agent worker: its tools only<\/option>/);

    const decided = await approveInConsole(f, page, browser.cookie!, browser.csrf!);
    assert.equal(decided.status, 303);
    const redirect = decided.headers.get('location')!;
    assert.ok(redirect.startsWith('http://127.0.0.1:53682/callback?code='), redirect);
    await finishAuthorization(f, provider, redirect);
    const first = provider.saved!;
    assert.equal(first.token_type, 'Bearer');
    assert.equal(first.scope, 'mcp');
    assert.equal(first.expires_in, 3600);
    assert.match(first.access_token, /^colony_oat_/);

    const client = await f.connect(first.access_token);
    const me = await client.callTool({ name: 'whoami', arguments: {} });
    assert.equal((me.structuredContent as { kind: string; name: string }).kind, 'owner');
    assert.ok((await client.listTools()).tools.length > AGENT_TOOLS.length, 'the owner sees every tool');

    assert.equal(
      await auth(provider, { serverUrl: `${f.base}/mcp` }),
      'AUTHORIZED',
      'the stored refresh token is used',
    );
    const second = provider.saved!;
    assert.notEqual(second.access_token, first.access_token);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.equal(await mcpStatus(f, first.access_token), 401, 'a rotated-out access token stops working');
    assert.equal(await mcpStatus(f, second.access_token), 200);

    const again = await f.connect(second.access_token);
    const revoked = await fetch(`${f.base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: second.refresh_token!, client_id: provider.info!.client_id }).toString(),
    });
    assert.equal(revoked.status, 200);
    await assert.rejects(again.listTools(), 'the next call of an open session is refused');
    assert.equal(await mcpStatus(f, second.access_token), 401);
    assert.deepEqual(oauthTypes(), [
      'OAuthAuthorizationApproved',
      'OAuthClientRegistered',
      'OAuthGrantIssued',
      'OAuthGrantRefreshed',
      'OAuthGrantRevoked',
    ]);
  });

  it("an agent's console session may not approve: the page says so, and the form is refused with nothing logged", async () => {
    const browser = new Browser(f);
    await browser.signIn(f.agentToken);
    const page = await startAuthorization(f, new MemoryProvider(), browser.cookie!);
    assert.match(page.html, /signed in to the console as agent <b>worker<\/b>/);
    assert.doesNotMatch(page.html, /value="approve"/);
    const before = f.eventCount();
    const res = await approveInConsole(f, page, browser.cookie!, browser.csrf!);
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('location'), null);
    assert.equal(f.eventCount(), before);
  });
});

describe('the owner approves with the CLI, from another process', () => {
  let grantsJson: { client_id: string; grants: { grant_id: number; as: string; status: string }[] }[] = [];

  it("approves as an agent: the token gets that agent's tools only; the CLI lists and revokes the grant", async () => {
    const provider = new MemoryProvider('http://localhost:41234/cb', 'CLI-approved client');
    const page = await startAuthorization(f, provider);
    assert.match(page.html, new RegExp(`colony oauth approve ${page.userCode}`));
    assert.doesNotMatch(page.html, /<form/, 'no cookie, no approve button');
    const cli = colony([
      '--data',
      f.app.dataDir,
      'oauth',
      'approve',
      page.userCode.toLowerCase().replace('-', ''),
      '--as',
      'agent:worker',
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, new RegExp(`Approved ${page.userCode} as agent worker`));
    const decision = await pollDecision(f, page.requestId);
    assert.equal(decision.status, 'approved');
    await finishAuthorization(f, provider, decision.redirect!);

    const token = provider.saved!.access_token;
    assert.deepEqual(await toolNames(token), AGENT_TOOLS);
    const me = await (await f.connect(token)).callTool({ name: 'whoami', arguments: {} });
    assert.deepEqual(
      [(me.structuredContent as { kind: string }).kind, (me.structuredContent as { name: string }).name],
      ['agent', 'worker'],
    );

    const list = colony(['--data', f.app.dataDir, 'oauth', 'clients', '--json']);
    assert.equal(list.code, 0, list.stderr);
    grantsJson = JSON.parse(list.stdout);
    const mine = grantsJson.find((c) => c.client_id === provider.info!.client_id)!;
    assert.equal(mine.grants.length, 1);
    assert.deepEqual([mine.grants[0]!.as, mine.grants[0]!.status], ['agent:worker', 'active']);
    const revoke = colony(['--data', f.app.dataDir, 'oauth', 'clients', 'revoke', mine.client_id]);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.equal(await mcpStatus(f, token), 401, 'revoked from another process: refused on the next request');
  });

  it('a denial sends the client access_denied', async () => {
    const page = await startAuthorization(f, new MemoryProvider());
    const cli = colony(['--data', f.app.dataDir, 'oauth', 'deny', page.userCode]);
    assert.equal(cli.code, 0, cli.stderr);
    const decision = await pollDecision(f, page.requestId);
    assert.equal(decision.status, 'denied');
    const url = new URL(decision.redirect!);
    assert.deepEqual(
      [
        url.searchParams.get('error'),
        url.searchParams.get('state'),
        url.searchParams.get('iss'),
        url.searchParams.get('code'),
      ],
      ['access_denied', 'state-xyz', f.base, null],
    );
    assert.equal(
      (await openAuthorization(new URL(`${f.base}/oauth/authorize/status?request=${'0'.repeat(64)}`))).status,
      404,
    );
  });

  it('rebuilding the oauth projection gives the same rows', () => {
    const tables = ['oauth_clients', 'oauth_approvals', 'oauth_grants', 'oauth_tokens'];
    const before = dumpTables(f.app.engine.db, tables);
    assert.ok((before.oauth_grants as unknown[]).length >= 2);
    f.app.engine.rebuild(['oauth']);
    assert.deepEqual(dumpTables(f.app.engine.db, tables), before);
  });
});
