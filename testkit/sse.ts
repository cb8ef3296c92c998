import type { Server } from 'node:http';
import express from 'express';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { createOwner } from '../src/actions/principals.js';
import { openApp, type App } from '../src/app.js';
import type { Durability } from '../src/engine/db.js';
import { mountEvents, type EventsOptions, type EventsRoute } from '../src/http/events.js';
import { listen } from '../src/http/server.js';
import { actorOf } from '../src/mcp/auth.js';
import { createMcpContext, type McpContext } from '../src/mcp/context.js';
import { buildToolRegistry } from '../src/mcp/tools/index.js';
import { type Speaker } from '../src/events/principals.js';
import { tempDir } from './temp-dir.js';

/**
 * `GET /api/events` on a real loopback socket, mounted the way api.ts mounts /api (the same bearer
 * verifier, `api` scope), next to `GET /health`; and a Server-Sent Events reader over fetch's body
 * (Node 20 has no EventSource).
 */
export interface EventsServer {
  app: App;
  ctx: McpContext;
  base: string;
  route: EventsRoute;
  dataDir: string;
  owner(name: string): { userId: number; token: string; speaker: Speaker };
  close(): Promise<void>;
}

const FAR_FUTURE = Math.floor(Date.UTC(2100, 0, 1) / 1000);

/** `dataDir`: where the store lives (left in place on close); default a scratch directory removed on close. */
export async function eventsServer(
  options: EventsOptions & { durability?: Durability; dataDir?: string } = {},
): Promise<EventsServer> {
  const scratch = options.dataDir ? { dir: options.dataDir, cleanup: () => undefined } : tempDir('colony-sse-');
  const app = openApp({ dataDir: scratch.dir, durability: options.durability ?? 'normal' });
  const ctx = createMcpContext(app, buildToolRegistry());
  const http = express();
  http.get('/health', (_req, res) => {
    res.json({ status: 'ok', position: app.engine.head().position });
  });
  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const caller = ctx.auth.authenticate(token);
      if (!caller) throw new InvalidTokenError('unknown or revoked token');
      return { token, clientId: actorOf(caller), scopes: caller.scopes, expiresAt: FAR_FUTURE, extra: { caller } };
    },
  };
  const router = express.Router();
  router.use(requireBearerAuth({ verifier, requiredScopes: ['api'] }), express.json({ limit: '1mb' }));
  const route = mountEvents(router, ctx, options);
  http.use('/api', router);
  const server: Server = await listen(http, '127.0.0.1', 0);
  return {
    app,
    ctx,
    route,
    dataDir: scratch.dir,
    base: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    owner(name) {
      const { userId, token } = createOwner(app, name, { actor: 'system' });
      return { userId, token, speaker: { key: `user-${userId}`, name, tenant: userId } };
    },
    async close() {
      route.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      ctx.audit.close();
      app.engine.close();
      scratch.cleanup();
    },
  };
}

export type SseItem = { kind: 'event'; id: string; event: string; data: string } | { kind: 'comment'; text: string };

/**
 * The frames of an event stream as the SSE spec reads them: `field: value` lines, `:` comments, a
 * blank line dispatches; a frame cut off by the end of the stream is never dispatched.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseItem> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let at = 0;
      for (let nl = buffer.indexOf('\n'); nl >= 0; at = nl + 1, nl = buffer.indexOf('\n', at)) {
        const line = buffer.slice(at, nl).replace(/\r$/, '');
        if (line === '') {
          if (data.length > 0) yield { kind: 'event', id, event: event || 'message', data: data.join('\n') };
          data = [];
          event = '';
          continue;
        }
        if (line.startsWith(':')) {
          yield { kind: 'comment', text: line.slice(1).trim() };
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(text);
        else if (field === 'event') event = text;
        else if (field === 'id' && !text.includes('\0')) id = text;
      }
      buffer = buffer.slice(at);
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** An open event stream; `close()` aborts it (a pending read then fails instead of hanging). */
export type SseStream = AsyncGenerator<SseItem> & { close(): void };

/** Opens the stream; throws with the status and body when it is not a 200 event stream. */
export async function openSse(url: string, token: string, options: { lastEventId?: number } = {}): Promise<SseStream> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
    throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  }
  return Object.assign(readSse(res.body!), { close: () => abort.abort() });
}

/** The next event frame (comments skipped), or null at the end of the stream. */
export async function nextEvent(
  stream: AsyncGenerator<SseItem>,
): Promise<{ id: number; event: string; data: Record<string, unknown> } | null> {
  for (;;) {
    const r = await stream.next();
    if (r.done) return null;
    if (r.value.kind === 'event')
      return {
        id: Number(r.value.id),
        event: r.value.event,
        data: JSON.parse(r.value.data) as Record<string, unknown>,
      };
  }
}
