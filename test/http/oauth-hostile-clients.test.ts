import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueGrant, type ClientInfo } from '../../src/actions/oauth.js';
import { colony } from '../helpers/cli.js';
import type { HttpFixture } from '../helpers/mcp-http.js';
import { oauthFixture, openAuthorization, pkcePair } from '../helpers/oauth.js';
import { checkRedirectUri } from '../../src/http/oauth-redirects.js';

/**
 * What an OAuth client says about itself, over real sockets: a name that hides characters (a bidi override
 * turning "Colony Helper\u202Efdp.exe" into what reads as "Colony Helperexe.pdf", zero-width or tag
 * characters making a look-alike) is refused at registration, and a client an older Colony logged with
 * one has it shown as visible `\uXXXX` escapes on the consent page and in `colony oauth clients`. Redirect
 * URIs are an allowlist — https, http to loopback, a native app's reverse-DNS scheme — so `ms-msdt:`,
 * `view-source:`, `search-ms:` are refused at registration and, for an old logged client, at authorization.
 */
let f: HttpFixture;
before(async () => {
  f = await oauthFixture();
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

function authorizeUrl(clientId: string, redirectUri: string): URL {
  const url = new URL(`${f.base}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    state: 's1',
    code_challenge_method: 'S256',
    code_challenge: pkcePair().challenge,
  }))
    url.searchParams.set(k, v);
  return url;
}

/** A client as an older Colony logged it with its first grant (to this owner), before today's rules. */
function loggedByAnOlderColony(client: ClientInfo): void {
  const { verifier, challenge } = pkcePair();
  issueGrant(
    f.app,
    client,
    {
      clientId: client.clientId,
      clientName: client.clientName,
      redirectUri: client.redirectUris[0]!,
      codeChallenge: challenge,
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
      resource: `${f.base}/mcp`,
      scopes: ['mcp'],
      principal: { kind: 'user', id: 1, ownerId: 1 },
      approvalN: 1,
    },
    { clientId: client.clientId, redirectUri: client.redirectUris[0]!, codeVerifier: verifier, resource: null },
  );
}

/** Every character a client name may not hide, each with how the page and the CLI show it. */
const HIDDEN: [string, string][] = [
  ['\u202e', 'U+202E'], // right-to-left override
  ['\u2066', 'U+2066'], // left-to-right isolate
  ['\u200f', 'U+200F'], // right-to-left mark
  ['\u061c', 'U+061C'], // Arabic letter mark
  ['\u200b', 'U+200B'], // zero-width space
  ['\u2060', 'U+2060'], // word joiner
  ['\ufeff', 'U+FEFF'], // BOM
  ['\u{e0041}', 'U+E0041'], // tag letter A
  ['\u2028', 'U+2028'], // line separator
  ['\u009b', 'U+009B'], // C1 CSI
  ['\u001b', 'U+001B'], // ESC
];

describe('OAuth client names show what they say', () => {
  it('registration refuses a name with a bidi control or an invisible character, naming it; visible Unicode is fine', async () => {
    for (const [ch, code] of HIDDEN) {
      const r = await register({ client_name: `Colony Helper${ch}fdp.exe`, redirect_uris: ['http://127.0.0.1/cb'] });
      assert.equal(r.status, 400, code);
      assert.equal(r.body.error, 'invalid_client_metadata', code);
      assert.ok(String(r.body.error_description).includes(`client_name contains ${code}, a control`), code);
    }
    const fine = await register({ client_name: 'Café ☕ Client — 日本語', redirect_uris: ['http://127.0.0.1/cb'] });
    assert.equal(fine.status, 201);
    assert.equal(fine.body.client_name, 'Café ☕ Client — 日本語');
  });

  it('a client an older Colony logged with such a name: the consent page and `colony oauth clients` show every one escaped', async () => {
    const name = `Colony Helper${HIDDEN.map(([ch]) => ch).join('')}fdp.exe`;
    const shown = `Colony Helper\\u202e\\u2066\\u200f\\u061c\\u200b\\u2060\\ufeff\\udb40\\udc41\\u2028\\u009b\\u001bfdp.exe`;
    const redirect = 'https://helper.example/cb';
    loggedByAnOlderColony({
      clientId: 'colony-client-legacy-name',
      kind: 'dcr',
      clientName: name,
      redirectUris: [redirect],
    });
    const page = await openAuthorization(authorizeUrl('colony-client-legacy-name', redirect));
    assert.equal(page.status, 200, page.html);
    assert.ok(page.html.includes(`Authorize “${shown}”?`), page.html.slice(0, 600));
    assert.ok(page.html.includes(`<title>Colony: authorize ${shown}</title>`));
    for (const [ch, code] of HIDDEN) assert.equal(page.html.includes(ch), false, `no raw ${code} on the page`);

    const cli = colony(['--data', f.app.dataDir, 'oauth', 'clients']);
    assert.equal(cli.code, 0, cli.stderr);
    const line = cli.stdout.split('\n').find((l) => l.startsWith('colony-client-legacy-name'))!;
    assert.ok(line.includes(`"${shown}"`), line);
  });
});

describe('OAuth redirect URIs are an allowlist', () => {
  it("registration refuses every scheme but https, http to loopback, a reverse-DNS private-use one and a known MCP client's", async () => {
    const refused = [
      'ms-msdt:id=PCWDiagnostic',
      'view-source:https://ok.example/cb',
      'search-ms:query=secrets',
      'ms-officecmd:{}',
      'file:///etc/passwd',
      'vbscript:msgbox(1)',
      'mailto:owner@example.com',
      'ftp://ok.example/cb',
      'myapp:/callback', // a private-use scheme, neither reverse-DNS nor a known MCP client's
      'http://helper.example/cb',
      'http://127.0.0.2/cb',
    ];
    for (const uri of refused) {
      const r = await register({ client_name: 'Schemes', redirect_uris: ['https://ok.example/cb', uri] });
      assert.equal(r.status, 400, uri);
      assert.equal(r.body.error, 'invalid_redirect_uri', uri);
      assert.match(String(r.body.error_description), /is refused: a redirect URI is https|only to 127\.0\.0\.1/, uri);
    }
    const allowed = [
      'https://ok.example/cb',
      'http://127.0.0.1:8765/cb',
      'http://localhost/cb',
      'http://[::1]:9/cb',
      'com.example.app:/oauth2redirect',
      'io.modelcontextprotocol.inspector://callback',
      'cursor://anysphere.cursor-retrieval/oauth/callback', // a known MCP client's own scheme
    ];
    const r = await register({ client_name: 'Allowed', redirect_uris: allowed });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const page = await openAuthorization(authorizeUrl(r.body.client_id as string, 'com.example.app:/oauth2redirect'));
    assert.equal(page.status, 200, 'a reverse-DNS scheme is authorized');
    assert.match(page.headers.get('content-security-policy') ?? '', /form-action 'self' com\.example\.app:/);
  });

  it('a client an older Colony logged with an ms-msdt: redirect is refused at authorization: an error page, never a redirect', async () => {
    const old: [string, string][] = [
      ['colony-client-legacy-msdt', 'ms-msdt:id=PCWDiagnostic /skip force /param "x"'],
      ['colony-client-legacy-viewsource', 'view-source:https://helper.example/cb'],
    ];
    for (const [clientId, uri] of old) {
      loggedByAnOlderColony({ clientId, kind: 'dcr', clientName: 'Old client', redirectUris: [uri] });
      const page = await openAuthorization(authorizeUrl(clientId, uri));
      assert.equal(page.status, 400, uri);
      assert.equal(page.headers.get('location'), null, 'no redirect');
      assert.match(
        page.html,
        /this client registered a redirect URI Colony refuses: the (ms-msdt|view-source): scheme is refused/,
      );
    }
  });
});

describe('an app scheme the owner names', () => {
  it('COLONY_OAUTH_SCHEMES adds a native client scheme; an operating-system handler stays refused', () => {
    const before = process.env.COLONY_OAUTH_SCHEMES;
    process.env.COLONY_OAUTH_SCHEMES = 'myapp, Other-App:';
    try {
      assert.equal(checkRedirectUri('myapp://callback'), null);
      assert.equal(checkRedirectUri('other-app:/cb'), null);
      assert.match(checkRedirectUri('ms-msdt:id=x') ?? '', /is refused/);
    } finally {
      if (before === undefined) delete process.env.COLONY_OAUTH_SCHEMES;
      else process.env.COLONY_OAUTH_SCHEMES = before;
    }
    assert.match(checkRedirectUri('myapp://callback') ?? '', /is refused/);
  });
});
