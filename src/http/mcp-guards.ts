import type { Request, RequestHandler } from 'express';
import { requireBearerAuth } from '@modelcontextprotocol/express';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { publicBaseUrl } from '../public-url.js';
import { resourceMetadataUrl } from './oauth.js';

/** What stands in front of /mcp (mcp.ts): the bearer check, CORS, and the small request probes both legs use. */
/**
 * The bearer check, with the protected-resource metadata URL (RFC 9728) in every challenge so an OAuth
 * client finds the authorization server from a 401. The public URL is read per request: under
 * `serve --port 0` it is known only once the socket is bound, after the routes are mounted.
 */
export function bearerAuth(verifier: { verifyAccessToken(token: string): Promise<AuthInfo> }): RequestHandler {
  const byUrl = new Map<string, RequestHandler>();
  return (req, res, next) => {
    const url = resourceMetadataUrl(publicBaseUrl());
    let check = byUrl.get(url);
    if (!check)
      byUrl.set(url, (check = requireBearerAuth({ verifier, requiredScopes: ['mcp'], resourceMetadataUrl: url })));
    return check(req, res, next);
  };
}

/**
 * CORS for browser-based MCP clients (the Inspector's web UI, hosted connectors): /mcp authenticates by
 * bearer token only — never a cookie — so any origin may call it with a token it holds; the headers a
 * client must read (session id, the auth challenge) are exposed. DNS rebinding is still refused by the
 * Host check in front of everything (server.ts).
 */
export const mcpCors: RequestHandler = (req, res, next) => {
  if (!req.headers.origin) return next();
  res.set({
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': 'Mcp-Session-Id, WWW-Authenticate, Mcp-Protocol-Version',
    'Access-Control-Allow-Headers':
      'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, traceparent, tracestate',
    'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
    'Access-Control-Max-Age': '600',
  });
  if (req.method === 'OPTIONS') return void res.status(204).end();
  next();
};

export const isListen = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'subscriptions/listen';

/**
 * The headers the era classification reads (the protocol-version header), without the body: express
 * has parsed it already, and isLegacyRequest classifies from the parsed value we pass beside it.
 */
export function legacyProbe(req: Request): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  return new globalThis.Request('http://colony.local/mcp', { method: req.method, headers });
}
