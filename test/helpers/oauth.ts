import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import {
  auth,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { setServedUrl } from '../../src/public-url.js';
import { httpFixture, type HttpFixture } from './mcp-http.js';
import type { Clock } from '../../src/clock.js';

/**
 * The OAuth tests' side: a real OAuth client (the MCP SDK v2 client's `auth()` with an in-memory
 * provider, as an MCP client app keeps its state) against a real Colony over loopback sockets, and the
 * browser steps a person takes — open the authorization page, approve, follow the redirect.
 */
export class MemoryProvider implements OAuthClientProvider {
  info: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = '';
  discovery: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | null = null;

  constructor(
    readonly redirect = 'http://127.0.0.1:53682/callback',
    readonly name = 'Test Client',
    readonly clientMetadataUrl?: string,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    return 'state-xyz';
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(s: OAuthDiscoveryState) {
    this.discovery = s;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** A Colony HTTP fixture whose public URL is its real address (the OAuth issuer and resource follow it). */
export async function oauthFixture(options: { agentTools?: string[]; clock?: Clock } = {}): Promise<HttpFixture> {
  const f = await httpFixture({ agentTools: options.agentTools, clock: options.clock });
  setServedUrl(f.base);
  return f;
}

export interface AuthorizationPage {
  url: URL;
  status: number;
  html: string;
  headers: Headers;
  requestId: string;
  userCode: string;
}

/** The browser opens the authorization URL (with the console cookie when given). */
export async function openAuthorization(url: URL, cookie?: string): Promise<AuthorizationPage> {
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie: `colony_session=${cookie}` } : {} });
  const html = await res.text();
  const requestId = /data-request="([0-9a-f]{64})"/.exec(html)?.[1] ?? '';
  const userCode = /<span class="code">([A-Z0-9]{4}-[A-Z0-9]{4})<\/span>/.exec(html)?.[1] ?? '';
  return { url, status: res.status, html, headers: res.headers, requestId, userCode };
}

/** Runs `auth()` up to the redirect to the authorization page; returns the page the browser gets. */
export async function startAuthorization(
  f: HttpFixture,
  provider: MemoryProvider,
  cookie?: string,
): Promise<AuthorizationPage> {
  const result = await auth(provider, {
    serverUrl: `${f.base}/mcp`,
    resourceMetadataUrl: await challengedMetadataUrl(f),
  });
  assert.equal(result, 'REDIRECT');
  const page = await openAuthorization(provider.authorizationUrl!, cookie);
  assert.equal(page.status, 200, page.html);
  return page;
}

/**
 * Discovery starts from /mcp's 401. Once its WWW-Authenticate carries `resource_metadata` (RFC 9728
 * §5.1) that URL is used; until then the client falls back to the well-known URL, as the SDK does.
 */
export async function challengedMetadataUrl(f: HttpFixture): Promise<URL | undefined> {
  const res = await fetch(`${f.base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(res.status, 401);
  const m = /resource_metadata="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '');
  return m ? new URL(m[1]!) : undefined;
}

/** The owner approves on the page itself (signed in to the console): the form's POST, answered by a 303 to the client. */
export async function approveInConsole(
  f: HttpFixture,
  page: AuthorizationPage,
  cookie: string,
  csrf: string,
  as = 'owner',
  decision = 'approve',
): Promise<Response> {
  return fetch(`${f.base}/oauth/authorize/decision`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: `colony_session=${cookie}`,
      origin: f.base,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ request: page.requestId, csrf, as, decision }).toString(),
  });
}

/** The waiting page's poll, until the decision arrives (or the deadline passes). */
export async function pollDecision(
  f: HttpFixture,
  requestId: string,
  deadlineMs = 10_000,
): Promise<{ status: string; redirect?: string }> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const body = (await (await fetch(`${f.base}/oauth/authorize/status?request=${requestId}`)).json()) as {
      status: string;
      redirect?: string;
    };
    if (body.status !== 'pending' || Date.now() > end) return body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The client's callback: its `code`, `state` and `iss`, handed to `auth()` for the exchange. */
export async function finishAuthorization(f: HttpFixture, provider: MemoryProvider, redirect: string): Promise<void> {
  const url = new URL(redirect);
  assert.equal(url.searchParams.get('state'), 'state-xyz');
  assert.equal(url.searchParams.get('iss'), f.base);
  const code = url.searchParams.get('code');
  assert.ok(code, `no code in ${redirect}`);
  assert.equal(
    await auth(provider, { serverUrl: `${f.base}/mcp`, authorizationCode: code, iss: url.searchParams.get('iss')! }),
    'AUTHORIZED',
  );
}

/** A raw form POST to the token endpoint. */
export async function tokenRequest(
  f: HttpFixture,
  fields: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${f.base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A raw `POST /mcp` initialize with a bearer token: the status says whether the token is accepted. */
export async function mcpStatus(f: HttpFixture, token: string): Promise<number> {
  const res = await fetch(`${f.base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

export const pkcePair = (): { verifier: string; challenge: string } => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};
