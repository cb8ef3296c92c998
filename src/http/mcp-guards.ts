import type { Request, RequestHandler } from 'express';
import { MAX_ARGS_DEPTH } from '../mcp/call-checks.js';
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

/**
 * How deep a JSON-RPC message on /mcp may nest. express.json parses any depth (V8's parser does not
 * recurse), but what runs next does: the SDK's node adapter re-serializes the parsed body with
 * JSON.stringify for the 2026-07-28 leg, which overflowed the stack at a few thousand levels and answered
 * 500. An honest message is a small envelope around arguments that may nest MAX_ARGS_DEPTH levels
 * (call-checks refuses more, naming the argument), so this leaves room for both and refuses the rest
 * before anything recursive reads it, on both revisions alike.
 */
export const MAX_MESSAGE_DEPTH = MAX_ARGS_DEPTH + 28;

/** Does `value` hold a container nested more than `limit` levels deep? Counted without recursion. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > limit) return true;
    for (const child of Object.values(node as object))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * After express.json, before the era classifier and either leg: a body nested past MAX_MESSAGE_DEPTH
 * goes on as an error of its own type, which mcp.ts answers (400, JSON-RPC Invalid Request) and audits
 * like a body it could not read.
 */
export const depthGuard: RequestHandler = (req, _res, next) => {
  const body: unknown = req.body;
  if (body === null || typeof body !== 'object' || !nestsDeeperThan(body, MAX_MESSAGE_DEPTH)) return next();
  next(Object.assign(new Error(`message nests deeper than ${MAX_MESSAGE_DEPTH} levels`), { type: TOO_DEEP }));
};
export const TOO_DEEP = 'entity.too.deep';
