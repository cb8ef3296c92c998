import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Express, type Request, type Response } from 'express';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import {
  isInitializeRequest,
  isLegacyRequest,
  OAuthError,
  OAuthErrorCode,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { envPositiveInt } from '../config.js';
import { principalRefOf } from '../mcp/audit.js';
import { actorOf, principalKey, type RequestAuth } from '../mcp/auth.js';
import type { McpContext } from '../mcp/context.js';
import { createMcpServer } from '../mcp/server.js';
import { bearerAuth, depthGuard, legacyProbe, MAX_MESSAGE_DEPTH, mcpCors, TOO_DEEP } from './mcp-guards.js';
import { SessionTable, type Session } from './mcp-sessions.js';
import { fastToolCall } from './mcp-fast-call.js';
import { claimsModern, modernLeg } from './mcp-modern.js';
import { type Caller } from '../events/principals.js';

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
 * from the same principal. Bodies up to 4 MiB and MAX_MESSAGE_DEPTH levels deep; beyond, a JSON error.
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
  const sweep = setInterval(() => sessions.closeIdle(Date.now() - idleMs), Math.min(idleMs, 60_000)).unref();
  const auth = bearerAuth(tokenVerifier(ctx));
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
    if (session.key !== keyOf(callerOf(req.auth)!))
      return (jsonRpcError(res, 403, 'This session belongs to another principal'), null);
    sessions.touch(id, session);
    return session;
  };
  const { handle: modern, close: closeModern } = modernLeg(ctx, currentCaller, callerOf);

  app.use('/mcp', mcpCors);
  app.post('/mcp', auth, express.json({ limit: MAX_BODY }), depthGuard, async (req: Request, res: Response) => {
    // A session id is 2025-only (2026-07-28 has no sessions): those calls skip the SDK's classifier.
    const id = req.header('mcp-session-id');
    if (!id && (claimsModern(req.body) || !(await isLegacyRequest(legacyProbe(req), req.body))))
      return void (await modern(req, res, req.body));
    const caller = callerOf(req.auth)!;
    if (id) {
      const session = sessionFor(req, res, id);
      if (!session || fastToolCall(ctx, req, res, caller, id)) return;
      return void (await session.transport.handleRequest(req, res, req.body));
    }
    if (!isInitializeRequest(req.body))
      return void jsonRpcError(res, 400, 'Bad Request: no valid session id, and not an initialize request');
    await openSession(ctx, sessions, currentCaller, keyOf(caller), req, res);
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
    res
      .status(405)
      .set('Allow', 'GET, POST, DELETE')
      .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null });
  });
  app.use('/mcp', bodyErrors(ctx, callerOf));

  return {
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await Promise.all([sessions.closeAll(), closeModern()]);
    },
  };
}

/** The principal a session is bound to: `agent:7@1` (kind and id, then the tenant). */
const keyOf = principalKey;

/** A 2025-era `initialize`: a new session with its own server, bound to the principal that opened it. */
async function openSession(
  ctx: McpContext,
  sessions: SessionTable,
  currentCaller: (request: RequestAuth) => Caller | null,
  key: string,
  req: Request,
  res: Response,
): Promise<void> {
  const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sid) => sessions.add(sid, { transport, key, lastSeen: Date.now() }),
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.remove(transport.sessionId);
  };
  const server = createMcpServer(ctx, currentCaller);
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}

/** Checks a bearer token for the SDK: its principal, re-read on every request, rides along in `extra`. */
function tokenVerifier(ctx: McpContext) {
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const caller = ctx.auth.authenticate(token);
      if (!caller) throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown, expired or revoked token');
      return { token, clientId: actorOf(caller), scopes: caller.scopes, expiresAt: FAR_FUTURE, extra: { caller } };
    },
  };
}

/** The id to answer a refused request with: its own when it has a plain one (a string or number), else null. */
const requestId = (body: unknown): string | number | null => {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

function jsonRpcError(res: Response, status: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

const BODY_ERRORS: Record<string, string> = {
  'entity.too.large': 'ErrBodyTooLarge',
  'entity.parse.failed': 'ErrParse',
  [TOO_DEEP]: 'ErrInvalidInput',
};

/**
 * express.json's errors (too large, malformed) and the depth guard's as JSON-RPC errors, never an HTML
 * page — and, since the caller was authenticated first, one audit row each (the tool is unknown: the
 * body was never read).
 */
function bodyErrors(ctx: McpContext, callerOf: (info: AuthInfo | undefined) => Caller | null): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const errorCode = BODY_ERRORS[String(err?.type)];
    if (!errorCode) return next(err);
    const caller = callerOf(req.auth);
    ctx.audit.record({
      at: ctx.app.engine.clock().toISOString(),
      principal: caller ? actorOf(caller) : 'anonymous',
      ...principalRefOf(caller),
      tool: '(unreadable request)',
      argsDigest: 'unhashable',
      outcome: 'error',
      errorCode,
      durationMs: 0,
      commandId: null,
    });
    if (errorCode === 'ErrBodyTooLarge') return jsonRpcError(res, 413, `Request body larger than ${MAX_BODY}`);
    if (errorCode === 'ErrInvalidInput')
      return res.status(400).json({
        jsonrpc: '2.0',
        error: {
          code: -32600,
          message: `Invalid Request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels`,
          data: { code: errorCode, max_depth: MAX_MESSAGE_DEPTH },
        },
        id: requestId(req.body),
      });
    return res
      .status(400)
      .json({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not valid JSON' }, id: null });
  };
}
