import type { Request, Response } from 'express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, PROTOCOL_VERSION_META_KEY, type AuthInfo } from '@modelcontextprotocol/server';
import { principalKey, type RequestAuth } from '../mcp/auth.js';
import type { McpContext } from '../mcp/context.js';
import { LISTEN_STREAMS_PER_PRINCIPAL, requestCaller, WatchBus } from '../mcp/listen-bus.js';
import { watchOf } from '../mcp/resource-watch.js';
import { createMcpServer } from '../mcp/server.js';
import { isListen } from './mcp-guards.js';
import type { Caller } from '../events/principals.js';

/**
 * A message whose `_meta` carries the 2026-07-28 protocol-version claim is never legacy: the SDK's own
 * classifier (isLegacyRequest) answers false for any claim, valid or not, and the modern leg answers
 * the bad ones. Seen here, the classifier's copy of the request is not built for every modern call.
 */
export function claimsModern(body: unknown): boolean {
  const meta = (body as { params?: { _meta?: unknown } } | null)?.params?._meta;
  return typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}

/**
 * The 2026-07-28 leg: strict (2025 traffic never reaches it), one server per request from the factory.
 * Each request runs knowing its principal, so a subscriptions/listen stream it opens is that
 * principal's: counted against its cap, silenced and closed when its token goes.
 */
export function modernLeg(
  ctx: McpContext,
  currentCaller: (request: RequestAuth) => Caller | null,
  callerOf: (info: AuthInfo | undefined) => Caller | null,
) {
  const bus = new WatchBus(watchOf(ctx));
  const handler = createMcpHandler(() => createMcpServer(ctx, currentCaller, { tasks: true }), {
    legacy: 'reject',
    bus,
  });
  const node = toNodeHandler(handler);
  const handle = async (req: Request, res: Response, body?: unknown) => {
    const token = (req.auth as AuthInfo | undefined)?.token;
    const key = principalKey(callerOf(req.auth)!);
    if (isListen(body) && !bus.hasRoomFor(key)) {
      return void res.status(200).json({
        jsonrpc: '2.0',
        id: (body as { id: unknown }).id,
        error: {
          code: -32603,
          message: `Subscription limit reached: at most ${LISTEN_STREAMS_PER_PRINCIPAL} open listen streams per principal`,
        },
      });
    }
    return requestCaller.run({ caller: () => ctx.auth.authenticate(token), key, close: () => res.destroy() }, () =>
      node(req, res, body),
    );
  };
  return { handle, close: () => handler.close() };
}
