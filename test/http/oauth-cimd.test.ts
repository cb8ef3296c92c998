import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { refuseInternalHost } from '../../src/http/oauth-cimd.js';
import { oauthClientById } from '../../src/projections/oauth-queries.js';
import type { HttpFixture } from '../helpers/mcp-http.js';
import {
  approveInConsole,
  finishAuthorization,
  mcpStatus,
  MemoryProvider,
  oauthFixture,
  openAuthorization,
  pkcePair,
  startAuthorization,
} from '../helpers/oauth.js';
import { Browser } from './console-client.js';

/**
 * Client ID Metadata Documents against a real metadata server on loopback (allowed over plain http only
 * with COLONY_OAUTH_ALLOW_HTTP_CLIENT_IDS=1, as here): the SDK client uses the URL as its client_id, Colony
 * fetches and checks the document, the owner approves, and the grant works. Documents that lie about
 * their id, redirect elsewhere, are too large, lack redirect URIs or name a refused scheme, or hide
 * characters in their name are refused on an error page.
 */
let f: HttpFixture;
let docs: Server;
let docBase = '';
const CALLBACK = 'http://127.0.0.1:61000/cb';

function serveDocuments(): Promise<Server> {
  const server = createServer((req, res) => {
    const self = `${docBase}${req.url}`;
    const json = (body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    switch (req.url) {
      case '/client.json':
        return json({
          client_id: self,
          client_name: 'Doc Client',
          redirect_uris: [CALLBACK],
          token_endpoint_auth_method: 'none',
        });
      case '/liar.json':
        return json({ client_id: `${docBase}/client.json`, client_name: 'Liar', redirect_uris: [CALLBACK] });
      case '/moved.json':
        return void res.writeHead(302, { location: `${docBase}/client.json` }).end();
      case '/big.json':
        return json({ client_id: self, client_name: 'Big', redirect_uris: [CALLBACK], padding: 'x'.repeat(70 * 1024) });
      case '/bidi.json':
        return json({ client_id: self, client_name: 'Doc Client\u202efdp.exe', redirect_uris: [CALLBACK] });
      case '/msdt.json':
        return json({ client_id: self, client_name: 'Doc Client', redirect_uris: ['ms-msdt:id=PCWDiagnostic'] });
      case '/no-uris.json':
        return json({ client_id: self, client_name: 'No URIs' });
      case '/secret.json':
        return json({
          client_id: self,
          client_name: 'Confidential',
          redirect_uris: [CALLBACK],
          token_endpoint_auth_method: 'private_key_jwt',
        });
      default:
        return void res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

before(async () => {
  process.env.COLONY_OAUTH_ALLOW_HTTP_CLIENT_IDS = '1';
  docs = await serveDocuments();
  docBase = `http://127.0.0.1:${(docs.address() as { port: number }).port}`;
  f = await oauthFixture();
});
after(async () => {
  await f.close();
  docs.close();
});

const page = (clientId: string) => {
  const url = new URL(`${f.base}/oauth/authorize`);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 's',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return openAuthorization(url);
};

describe('client ID metadata documents', () => {
  it('the document URL is the client id: fetched, shown, approved, and the client is logged with its first grant', async () => {
    const browser = new Browser(f);
    await browser.signIn(f.ownerToken);
    const provider = new MemoryProvider(CALLBACK, 'ignored: the document names it');
    const clientId = `${docBase}/client.json`;
    provider.info = { client_id: clientId };
    const shown = await startAuthorization(f, provider, browser.cookie!);
    assert.match(shown.html, /Authorize “Doc Client”\?/);
    assert.match(shown.html, /described by its metadata document at <code>127\.0\.0\.1:\d+<\/code>/);
    const decided = await approveInConsole(f, shown, browser.cookie!, browser.csrf!);
    await finishAuthorization(f, provider, decided.headers.get('location')!);
    assert.equal(await mcpStatus(f, provider.saved!.access_token), 200);
    const logged = oauthClientById(f.app.engine.db, clientId);
    assert.deepEqual([logged?.kind, logged?.clientName, logged?.redirectUris], ['cimd', 'Doc Client', [CALLBACK]]);
  });

  it('refuses a document that names another client, redirects, exceeds 64 KiB, lacks or misuses redirect URIs, hides characters in its name or wants a secret', async () => {
    const cases: [string, RegExp][] = [
      ['/liar.json', /names another client_id/],
      ['/moved.json', /redirects are not followed/],
      ['/big.json', /larger than 64 KiB/],
      ['/no-uris.json', /needs 1-10 redirect_uris/],
      ['/bidi.json', /client_name contains U\+202E, a control, bidirectional or invisible character/],
      ['/msdt.json', /redirect_uris: the ms-msdt: scheme is refused/],
      ['/secret.json', /public clients only/],
      ['/missing.json', /HTTP 404/],
    ];
    for (const [path, message] of cases) {
      const p = await page(`${docBase}${path}`);
      assert.equal(p.status, 400, path);
      assert.equal(p.headers.get('location'), null);
      assert.match(p.html, message, path);
    }
  });

  it('plain http is refused without COLONY_OAUTH_ALLOW_HTTP_CLIENT_IDS=1, and a redirect URI the document does not list gets no redirect', async () => {
    delete process.env.COLONY_OAUTH_ALLOW_HTTP_CLIENT_IDS;
    try {
      const p = await page(`${docBase}/client.json`);
      assert.equal(p.status, 400);
      assert.match(p.html, /must be https/);
    } finally {
      process.env.COLONY_OAUTH_ALLOW_HTTP_CLIENT_IDS = '1';
    }
    const url = new URL(
      `${f.base}/oauth/authorize?response_type=code&code_challenge_method=S256&redirect_uri=https://evil.example/cb`,
    );
    url.searchParams.set('client_id', `${docBase}/client.json`);
    url.searchParams.set('code_challenge', pkcePair().challenge);
    const p = await openAuthorization(url);
    assert.equal(p.status, 400);
    assert.equal(p.headers.get('location'), null);
  });

  it('refuses a client_id host that resolves to a local or private address, or does not resolve', async () => {
    await assert.rejects(refuseInternalHost('localhost'), /resolves to a private or local address/);
    await assert.rejects(refuseInternalHost('no-such-host.invalid'), /does not resolve/);
  });
});
