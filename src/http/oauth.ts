import express, { type Express, type RequestHandler } from 'express';
import type { McpContext } from '../mcp/context.js';
import { OAUTH_SCOPES } from '../events/oauth.js';
import { publicBaseUrl } from '../public-url.js';
import { mountAuthorize } from './oauth-authorize.js';
import { MetadataDocuments } from './oauth-cimd.js';
import { ClientRegistry, mountRegister } from './oauth-clients.js';
import { OAuthDesk } from './oauth-desk.js';
import { defaultLimits, oauthErrors, type OAuthLimits } from './oauth-errors.js';
import { AuthCodes, PendingRequests } from './oauth-requests.js';
import { mountToken } from './oauth-token.js';
import type { SessionStore } from './session.js';

/**
 * OAuth 2.1 for remote MCP clients, mounted beside `/mcp`: Colony is both the protected
 * resource (`<public url>/mcp`) and its own authorization server, whose issuer is the public URL
 * (public-url.ts, read per request: `serve --port 0` learns its URL only once it listens).
 *
 * - `GET /.well-known/oauth-protected-resource[/mcp]` — RFC 9728 (what /mcp's 401 points to);
 * - `GET /.well-known/oauth-authorization-server` — RFC 8414;
 * - `POST /oauth/register` — RFC 7591 (oauth-clients.ts); client ID metadata documents (oauth-cimd.ts);
 * - `GET /oauth/authorize`, its status poll (oauth-authorize.ts) and the console's decision form (oauth-decision.ts);
 * - the console's `/api/oauth/*` routes are mounted by mountApi (api-oauth.ts) from the desk returned here;
 * - `POST /oauth/token`, `POST /oauth/revoke` (oauth-token.ts).
 *
 * No OpenID Connect alias: Colony issues no ID tokens, and `/.well-known/openid-configuration` would
 * promise fields (jwks_uri, id_token algorithms) it does not have; clients look up RFC 8414 first.
 * Static bearer tokens keep working unchanged; an OAuth access token authenticates through the same
 * Authenticator (mcp/auth.ts).
 */
export interface OAuthOptions {
  /** The console's sessions: a signed-in owner approves on the authorization page itself. */
  sessions?: SessionStore | null;
  publicUrl?: () => string;
  limits?: OAuthLimits;
  documents?: MetadataDocuments;
}

export interface OAuthRoutes {
  readonly requests: PendingRequests;
  readonly clients: ClientRegistry;
  /** The pending requests as the console's REST routes see and decide them (api-oauth.ts). */
  readonly desk: OAuthDesk;
}

const trim = (url: string): string => url.replace(/\/+$/, '');
/** The protected resource an OAuth token is for: the MCP endpoint. */
export const mcpResourceUrl = (publicUrl: string): string => `${trim(publicUrl)}/mcp`;
/** Where /mcp's `WWW-Authenticate: Bearer resource_metadata="…"` points (RFC 9728 §3.1: the resource's path after the well-known name). */
export const resourceMetadataUrl = (publicUrl: string): string =>
  `${trim(publicUrl)}/.well-known/oauth-protected-resource/mcp`;

export function protectedResourceMetadata(publicUrl: string) {
  return {
    resource: mcpResourceUrl(publicUrl),
    authorization_servers: [trim(publicUrl)],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Colony',
  };
}

export function authorizationServerMetadata(publicUrl: string) {
  const issuer = trim(publicUrl);
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * Browser-based clients (the MCP Inspector) call discovery, registration and the token endpoint from
 * another origin. None of them reads a cookie, so any origin may; the authorization page and the
 * decision form (cookie-bearing) get no CORS at all.
 */
const cors: RequestHandler = (req, res, next) => {
  res.set({
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization, MCP-Protocol-Version',
    'Access-Control-Max-Age': '600',
  });
  if (req.method === 'OPTIONS') return void res.status(204).end();
  next();
};

export function mountOAuth(app: Express, ctx: McpContext, options: OAuthOptions = {}): OAuthRoutes {
  const colony = ctx.app;
  const base = () => trim(options.publicUrl?.() ?? publicBaseUrl());
  // Lifetimes follow the engine clock, like the tokens' expiry (tests move a fake one).
  const now = () => colony.engine.clock().getTime();
  const limits = options.limits ?? defaultLimits();
  const requests = new PendingRequests(now);
  const codes = new AuthCodes(now);
  const clients = new ClientRegistry(colony, options.documents ?? new MetadataDocuments());
  const router = express.Router();
  router.use(
    [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
      '/oauth/register',
      '/oauth/token',
      '/oauth/revoke',
    ],
    cors,
  );
  router.get(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'], (_req, res) => {
    res.set('Cache-Control', 'max-age=300').json(protectedResourceMetadata(base()));
  });
  router.get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.set('Cache-Control', 'max-age=300').json(authorizationServerMetadata(base()));
  });
  mountRegister(router, clients, limits);
  mountAuthorize(router, {
    app: colony,
    issuer: base,
    resource: () => mcpResourceUrl(base()),
    clients,
    requests,
    codes,
    sessions: options.sessions ?? null,
    limits,
  });
  mountToken(router, { app: colony, codes, limits });
  router.use(oauthErrors);
  app.use(router);
  return { requests, clients, desk: new OAuthDesk({ app: colony, codes, issuer: base, requests }) };
}
