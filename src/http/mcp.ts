import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import { requireBearerAuth } from '@modelcontextprotocol/express';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, isInitializeRequest, isLegacyRequest, OAuthError, OAuthErrorCode, type AuthInfo } from '@modelcontextprotocol/server';
import { envPositiveInt } from '../config.js';
import { principalRefOf } from '../mcp/audit.js';
import { publicBaseUrl } from '../public-url.js';
import { resourceMetadataUrl } from './oauth.js';
import { actorOf, principalKey, type Caller, type RequestAuth } from '../mcp/auth.js';
import type { McpContext } from '../mcp/context.js';
import { LISTEN_STREAMS_PER_PRINCIPAL, requestCaller, WatchBus } from '../mcp/listen-bus.js';
import { watchOf } from '../mcp/resource-watch.js';
import { createMcpServer } from '../mcp/server.js';

/**
 * `/mcp` serves both MCP revisions on one endpoint (SDK v2):
 * - 2025-era clients (`initialize`, then `Mcp-Session-Id`) keep stateful sessions — one MCP server per
 *   session, bound to the principal that initialized it by kind, id and tenant (never by name: another
 *   tenant may have an agent of the same name); open sessions are capped (SessionTable).
 * - 2026-07-28 clients call statelessly: every request carries its own envelope and gets a fresh server
 *   from the same factory (createMcpHandler), so nothing a call means depends on the revision that
 *   carried it — claims, leases, idempotency and audit live in the log either way.
 * Every request carries a bearer token (static or OAuth, checked by the SDK's requireBearerAuth: 401 +
 * WWW-Authenticate when missing or bad, 403 without the `mcp` scope); a request on a session must come
 * from the same principal. Bodies up to 4 MiB; beyond, a JSON error.
 */
export const MAX_BODY = '4mb';
// Static API tokens do not expire; the SDK requires an expiry, so they report one far ahead.
const FAR_FUTURE = Math.floor(Date.UTC(2100, 0, 1) / 1000);

/** Sessions idle this long are closed: clients that vanish without DELETE must not pile up. */
export const SESSION_IDLE_MS = 30 * 60_000;
export const SESSIONS_PER_PRINCIPAL = 32;
export const SESSIONS_MAX = 1024;

export interface McpOptions {
  idleMs?: number;
  /** Default: COLONY_MCP_SESSIONS_PER_PRINCIPAL, else 32. */
  perPrincipal?: number;
  /** Default: COLONY_MCP_SESSIONS_MAX, else 1024. */
  maxSessions?: number;
}

export interface McpRoutes {
  /** Open sessions now (for tests and benchmarks: the caps must hold under a flood). */
  sessionCount(): number;
  close(): Promise<void>;
}

export function mountMcp(app: Express, ctx: McpContext, options: McpOptions = {}): McpRoutes {
  const idleMs = options.idleMs ?? SESSION_IDLE_MS;
  const sessions = new SessionTable(
    options.perPrincipal ?? envPositiveInt('COLONY_MCP_SESSIONS_PER_PRINCIPAL', SESSIONS_PER_PRINCIPAL),
    options.maxSessions ?? envPositiveInt('COLONY_MCP_SESSIONS_MAX', SESSIONS_MAX),
  );
  const sweep = setInterval(() => sessions.closeIdle(Date.now() - idleMs), Math.min(idleMs, 60_000));
  sweep.unref();
  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const caller = ctx.auth.authenticate(token);
      if (!caller) throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown, expired or revoked token');
      return { token, clientId: actorOf(caller), scopes: caller.scopes, expiresAt: FAR_FUTURE, extra: { caller } };
    },
  };
  const auth = bearerAuth(verifier);
  const callerOf = (info: AuthInfo | undefined): Caller | null => (info?.extra?.caller as Caller | undefined) ?? null;
  // Re-read from the token every time (cached by the Authenticator, dropped on any principal change): a
  // subscription made on one request asks again on every notification, so a revocation silences it.
  const currentCaller = (request: RequestAuth): Caller | null => {
    const token = (request.http?.authInfo as AuthInfo | undefined)?.token;
    return token ? ctx.auth.authenticate(token) : null;
  };
  /** The session a request names, if it is there and this principal's; otherwise the error is answered. */
  const sessionFor = (req: Request, res: Response, id: string): Session | null => {
    const session = sessions.get(id);
    if (!session) return (jsonRpcError(res, 404, 'Session not found'), null);
    if (session.key !== keyOf(callerOf(req.auth)!)) return (jsonRpcError(res, 403, 'This session belongs to another principal'), null);
    sessions.touch(id, session);
    return session;
  };
  // The 2026-07-28 leg: strict (2025 traffic never reaches it), one server per request from the factory.
  const bus = new WatchBus(watchOf(ctx));
  const modernHandler = createMcpHandler(() => createMcpServer(ctx, currentCaller, { tasks: true }), { legacy: 'reject', bus });
  const modernNode = toNodeHandler(modernHandler);
  // Each modern request runs knowing its principal, so a subscriptions/listen stream it opens is that
  // principal's: counted against its cap, silenced and closed when its token goes.
  const modern = async (req: Request, res: Response, body?: unknown) => {
    const token = (req.auth as AuthInfo | undefined)?.token;
    const key = keyOf(callerOf(req.auth)!);
    if (isListen(body) && !bus.hasRoomFor(key)) {
      return void res.status(200).json({ jsonrpc: '2.0', id: (body as { id: unknown }).id, error: { code: -32603, message: `Subscription limit reached: at most ${LISTEN_STREAMS_PER_PRINCIPAL} open listen streams per principal` } });
    }
    return requestCaller.run({ caller: () => ctx.auth.authenticate(token), key, close: () => res.destroy() }, () => modernNode(req, res, body));
  };

  app.use('/mcp', mcpCors);
  app.post('/mcp', auth, express.json({ limit: MAX_BODY }), async (req: Request, res: Response) => {
    // A session id is 2025-only (2026-07-28 has no sessions): those calls skip the SDK's classifier.
    const id = req.header('mcp-session-id');
    if (!id && !(await isLegacyRequest(legacyProbe(req), req.body))) return void (await modern(req, res, req.body));
    const caller = callerOf(req.auth)!;
    if (id) {
      const session = sessionFor(req, res, id);
      return void (session && (await session.transport.handleRequest(req, res, req.body)));
    }
    if (!isInitializeRequest(req.body)) return void jsonRpcError(res, 400, 'Bad Request: no valid session id, and not an initialize request');
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.add(sid, { transport, key: keyOf(caller), lastSeen: Date.now() }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.remove(transport.sessionId);
    };
    const server = createMcpServer(ctx, currentCaller);
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  // GET and DELETE exist only for 2025-era sessions; without a session id the modern leg answers (405).
  const onSession = async (req: Request, res: Response) => {
    const id = req.header('mcp-session-id');
    if (!id) return void (await modern(req, res));
    const session = sessionFor(req, res, id);
    if (session) await session.transport.handleRequest(req, res);
  };
  app.get('/mcp', auth, onSession);
  app.delete('/mcp', auth, onSession);
  app.all('/mcp', (_req, res) => {
    res.status(405).set('Allow', 'GET, POST, DELETE').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null });
  });
  app.use('/mcp', bodyErrors(ctx, callerOf));

  return {
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await Promise.all([sessions.closeAll(), modernHandler.close()]);
    },
  };
}

/**
 * The bearer check, with the protected-resource metadata URL (RFC 9728) in every challenge so an OAuth
 * client finds the authorization server from a 401. The public URL is read per request: under
 * `serve --port 0` it is known only once the socket is bound, after the routes are mounted.
 */
function bearerAuth(verifier: { verifyAccessToken(token: string): Promise<AuthInfo> }): RequestHandler {
  const byUrl = new Map<string, RequestHandler>();
  return (req, res, next) => {
    const url = resourceMetadataUrl(publicBaseUrl());
    let check = byUrl.get(url);
    if (!check) byUrl.set(url, (check = requireBearerAuth({ verifier, requiredScopes: ['mcp'], resourceMetadataUrl: url })));
    return check(req, res, next);
  };
}

/**
 * CORS for browser-based MCP clients (the Inspector's web UI, hosted connectors): /mcp authenticates by
 * bearer token only — never a cookie — so any origin may call it with a token it holds; the headers a
 * client must read (session id, the auth challenge) are exposed. DNS rebinding is still refused by the
 * Host check in front of everything (server.ts).
 */
const mcpCors: RequestHandler = (req, res, next) => {
  if (!req.headers.origin) return next();
  res.set({
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': 'Mcp-Session-Id, WWW-Authenticate, Mcp-Protocol-Version',
    'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, traceparent, tracestate',
    'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
    'Access-Control-Max-Age': '600',
  });
  if (req.method === 'OPTIONS') return void res.status(204).end();
  next();
};

const isListen = (body: unknown): boolean => typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'subscriptions/listen';

/**
 * The headers the era classification reads (the protocol-version header), without the body: express
 * has parsed it already, and isLegacyRequest classifies from the parsed value we pass beside it.
 */
function legacyProbe(req: Request): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  return new globalThis.Request('http://colony.local/mcp', { method: req.method, headers });
}

/** The principal a session is bound to: `agent:7@1` (kind and id, then the tenant). */
const keyOf = principalKey;

interface Session {
  transport: NodeStreamableHTTPServerTransport;
  key: string;
  lastSeen: number;
}

/**
 * Open sessions, least recently seen first — overall and per principal (a Map iterates in insertion
 * order; a touch re-inserts, so the first entry is always the stalest). A new session first makes room
 * under its principal's cap by closing that principal's stalest session, then under the global cap by
 * closing the stalest overall. The per-principal cap comes first and is much smaller, so a principal
 * flooding `initialize` only churns its own sessions: it can push out at most `perPrincipal` sessions of
 * others (the ones it opens while under its own cap), and only the ones seen least recently.
 * A session leaves both maps at once, so the counts hold even before its transport finishes closing.
 */
class SessionTable {
  private readonly all = new Map<string, Session>();
  private readonly byKey = new Map<string, Map<string, Session>>();

  constructor(readonly perPrincipal: number, readonly max: number) {
    if (![perPrincipal, max].every((n) => Number.isSafeInteger(n) && n >= 1)) throw new RangeError(`session caps must be positive integers: ${perPrincipal}, ${max}`);
  }

  get size(): number {
    return this.all.size;
  }

  get(id: string): Session | undefined {
    return this.all.get(id);
  }

  touch(id: string, s: Session): void {
    s.lastSeen = Date.now();
    this.all.delete(id);
    this.all.set(id, s);
    const mine = this.byKey.get(s.key)!;
    mine.delete(id);
    mine.set(id, s);
  }

  add(id: string, s: Session): void {
    const mine = this.byKey.get(s.key) ?? new Map<string, Session>();
    while (mine.size >= this.perPrincipal) this.evict(mine.keys().next().value!);
    while (this.all.size >= this.max) this.evict(this.all.keys().next().value!);
    this.byKey.set(s.key, mine);
    mine.set(id, s);
    this.all.set(id, s);
  }

  remove(id: string): Session | undefined {
    const s = this.all.get(id);
    if (!s) return undefined;
    this.all.delete(id);
    const mine = this.byKey.get(s.key)!;
    mine.delete(id);
    if (mine.size === 0) this.byKey.delete(s.key);
    return s;
  }

  /** Sessions not seen since `cutoff`: they sit at the front, so the walk stops at the first fresh one. */
  closeIdle(cutoff: number): void {
    for (const [id, s] of this.all) {
      if (s.lastSeen >= cutoff) break;
      this.evict(id);
    }
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.all.keys()].map((id) => this.remove(id)!.transport.close()));
  }

  private evict(id: string): void {
    void this.remove(id)?.transport.close();
  }
}

function jsonRpcError(res: Response, status: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/**
 * express.json's errors (too large, malformed) as JSON-RPC errors, never an HTML page — and, since the
 * caller was authenticated first, one audit row each (the tool is unknown: the body was never read).
 */
function bodyErrors(ctx: McpContext, callerOf: (info: AuthInfo | undefined) => Caller | null): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const tooLarge = err?.type === 'entity.too.large';
    if (!tooLarge && err?.type !== 'entity.parse.failed') return next(err);
    const caller = callerOf(req.auth);
    ctx.audit.record({
      at: ctx.app.engine.clock().toISOString(), principal: caller ? actorOf(caller) : 'anonymous', ...principalRefOf(caller), tool: '(unreadable request)',
      argsDigest: 'unhashable', outcome: 'error', errorCode: tooLarge ? 'ErrBodyTooLarge' : 'ErrParse', durationMs: 0, commandId: null,
    });
    if (tooLarge) return jsonRpcError(res, 413, `Request body larger than ${MAX_BODY}`);
    return res.status(400).json({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not valid JSON' }, id: null });
  };
}
