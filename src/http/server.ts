import type { Server } from 'node:http';
import express, { type ErrorRequestHandler, type Express } from 'express';
import { localhostHostValidation } from '@modelcontextprotocol/express';
import type { Engine } from '../engine/engine.js';
import { log } from '../log.js';
import type { McpContext } from '../mcp/context.js';
import { nodeProblemView, writesStopped } from '../mcp/views/integrity.js';
import { mountApi } from './api.js';
import { mountApps } from './apps.js';
import { mountMcp } from './mcp.js';
import { mountOAuth } from './oauth.js';
import { mountProbes } from './probes.js';
import { SessionStore } from './session.js';
import { mountConsole } from './web.js';

/**
 * The HTTP surface: `GET /health`, `/mcp` with its OAuth authorization server (oauth.ts), `/api` (with `/api/events`),
 * the probe trigger, `/apps` (web apps) and the console at `/` (web.ts). Every error is a JSON body — never an HTML page or a stack trace.
 * Bound to loopback, the Host header must name loopback too (DNS-rebinding protection).
 */
export const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export interface HttpApp {
  app: Express;
  close(): Promise<void>;
}

export function createHttpApp(engine: Engine, mcp?: McpContext, host = '127.0.0.1'): HttpApp {
  const app = express();
  app.disable('x-powered-by');
  // Parsing requests is what the event loop does while a batch's fsync runs on the pool (engine/wal-sync.ts).
  engine.group.deferSyncs = true;
  if (LOOPBACK.has(host)) app.use(localhostHostValidation());
  const mcpRoutes = mcp ? mountMcp(app, mcp) : null;
  if (mcp) mountProbes(app, mcp.app);
  if (mcp) mountApps(app, mcp.app);
  // One session store for /api and the OAuth authorization page (a signed-in owner approves there);
  // OAuth first, since it owns the pending requests the console's /api/oauth routes read and decide.
  const sessions = new SessionStore();
  const oauth = mcp ? mountOAuth(app, mcp, { sessions }) : null;
  const api = mcp ? mountApi(app, mcp, { sessions, oauth: oauth!.desk }) : null;
  app.get('/health', (_req, res) => {
    const position = engine.durableHead(); // what is on disk and published, never a batch still syncing or lost
    const problem = nodeProblemView(mcp ? mcp.node.problem() : writesStopped(engine));
    if (!problem) return void res.json({ status: 'ok', position });
    res.status(503).json({ status: 'degraded', position, ...problem });
  });
  if (mcp) mountConsole(app);
  app.use((req, res) => {
    res.status(404).json({ error: { code: 'ErrNotFound', message: `no route for ${req.method} ${req.path}` } });
  });
  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    const status = typeof err?.status === 'number' ? err.status : 500;
    if (status >= 500) log.error({ err }, 'request failed');
    res.status(status).json({
      error: {
        code: status >= 500 ? 'ErrInternal' : 'ErrBadRequest',
        message: status >= 500 ? 'internal error' : String(err.message),
      },
    });
  };
  app.use(onError);
  return {
    app,
    close: async () => {
      api?.close();
      await mcpRoutes?.close();
    },
  };
}

/**
 * How long an idle keep-alive connection stays open. Node's default (5 s) is below the 60 s idle timeout
 * of common clients and proxies (nginx, load balancers, HTTP agents), which then reuse a socket the
 * server is closing and get a reset. The server must be the one to wait longer; headersTimeout must
 * exceed keepAliveTimeout, or a request arriving just before the idle cut can be dropped.
 */
export const KEEP_ALIVE_MS = 75_000;
export const HEADERS_TIMEOUT_MS = 76_000;

/** Listens and resolves once bound; rejects with a clear message when the port is taken. */
export function listen(app: Express, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        reject(
          new Error(
            code === 'EADDRINUSE'
              ? `${host}:${port} is already in use`
              : `cannot listen on ${host}:${port}: ${err.message}`,
          ),
        );
      } else resolve(server);
    });
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.headersTimeout = HEADERS_TIMEOUT_MS;
  });
}
