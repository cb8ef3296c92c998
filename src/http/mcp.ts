import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Express, type Request, type Response } from 'express';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { actorOf, type Caller } from '../mcp/auth.js';
import type { McpContext } from '../mcp/context.js';
import { createMcpServer } from '../mcp/server.js';

/**
 * `/mcp`: Streamable HTTP with stateful sessions — one MCP server per session, bound to the principal
 * that initialized it. Every request carries a bearer token (checked by the SDK's requireBearerAuth:
 * 401 + WWW-Authenticate when missing or bad, 403 without the `mcp` scope); a request on a session
 * must come from the same principal. Bodies up to 4 MiB; beyond, a JSON error.
 */
export const MAX_BODY = '4mb';
// Static API tokens do not expire; the SDK requires an expiry, so they report one far ahead.
const FAR_FUTURE = Math.floor(Date.UTC(2100, 0, 1) / 1000);

interface Session {
  transport: StreamableHTTPServerTransport;
  principal: string;
  lastSeen: number;
}

/** Sessions idle this long are closed: clients that vanish without DELETE must not pile up. */
export const SESSION_IDLE_MS = 30 * 60_000;

export function mountMcp(app: Express, ctx: McpContext, idleMs = SESSION_IDLE_MS): { close(): Promise<void> } {
  const sessions = new Map<string, Session>();
  const sweep = setInterval(() => {
    const cutoff = Date.now() - idleMs;
    for (const s of sessions.values()) if (s.lastSeen < cutoff) void s.transport.close();
  }, Math.min(idleMs, 60_000));
  sweep.unref();
  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const caller = ctx.auth.authenticate(token);
      if (!caller) throw new InvalidTokenError('unknown or revoked token');
      return { token, clientId: actorOf(caller), scopes: caller.scopes, expiresAt: FAR_FUTURE, extra: { caller } };
    },
  };
  const auth = requireBearerAuth({ verifier, requiredScopes: ['mcp'] });
  const callerOf = (info: AuthInfo | undefined): Caller | null => (info?.extra?.caller as Caller | undefined) ?? null;

  app.post('/mcp', auth, express.json({ limit: MAX_BODY }), async (req: Request, res: Response) => {
    const caller = callerOf(req.auth)!;
    const id = req.header('mcp-session-id');
    if (id) {
      const session = sessions.get(id);
      if (!session) return void jsonRpcError(res, 404, 'Session not found');
      if (session.principal !== actorOf(caller)) return void jsonRpcError(res, 403, 'This session belongs to another principal');
      session.lastSeen = Date.now();
      return void (await session.transport.handleRequest(req, res, req.body));
    }
    if (!isInitializeRequest(req.body)) return void jsonRpcError(res, 400, 'Bad Request: no valid session id, and not an initialize request');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, { transport, principal: actorOf(caller), lastSeen: Date.now() }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const server = createMcpServer(ctx, caller, (extra) => callerOf(extra.authInfo as AuthInfo | undefined));
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  const onSession = async (req: Request, res: Response) => {
    const id = req.header('mcp-session-id');
    const session = id ? sessions.get(id) : undefined;
    if (!session) return void jsonRpcError(res, id ? 404 : 400, id ? 'Session not found' : 'Bad Request: missing mcp-session-id');
    if (session.principal !== actorOf(callerOf(req.auth)!)) return void jsonRpcError(res, 403, 'This session belongs to another principal');
    session.lastSeen = Date.now();
    await session.transport.handleRequest(req, res);
  };
  app.get('/mcp', auth, onSession);
  app.delete('/mcp', auth, onSession);
  app.all('/mcp', (_req, res) => {
    res.status(405).set('Allow', 'GET, POST, DELETE').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null });
  });
  app.use('/mcp', bodyErrors(ctx, callerOf));

  return {
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.transport.close()));
      sessions.clear();
    },
  };
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
      at: ctx.app.engine.clock().toISOString(), principal: caller ? actorOf(caller) : 'anonymous', tool: '(unreadable request)',
      argsDigest: 'unhashable', outcome: 'error', errorCode: tooLarge ? 'ErrBodyTooLarge' : 'ErrParse', durationMs: 0, commandId: null,
    });
    if (tooLarge) return jsonRpcError(res, 413, `Request body larger than ${MAX_BODY}`);
    return res.status(400).json({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not valid JSON' }, id: null });
  };
}
