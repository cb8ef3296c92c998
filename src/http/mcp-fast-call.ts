import type { Request, Response } from 'express';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { McpContext } from '../mcp/context.js';
import { answerToolCall, plainToolCall } from '../mcp/fast-call.js';
import type { Caller } from '../events/principals.js';

/**
 * A plain `tools/call` on an open 2025-11-25 session (mcp/fast-call.ts), answered with one JSON body. The
 * Streamable HTTP spec lets a server answer any POSTed request with `application/json` instead of a
 * stream, and MCP clients accept both. Besides the message's own shape, the request must pass what the
 * SDK's transport checks before it reads a message — a client accepting both JSON and SSE, a JSON
 * content type, no protocol-version header or one the SDK supports — or it goes to the SDK, which
 * answers it (406, 415, 400) as before. Session and principal were checked by mcp.ts already.
 */
export function fastToolCall(ctx: McpContext, req: Request, res: Response, caller: Caller, sessionId: string): boolean {
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (!isJsonType(req.headers['content-type'])) return false;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) return false;
  const call = plainToolCall(req.body);
  if (!call) return false;
  void answerToolCall(ctx, caller, call).then((message) => answer(res, sessionId, message));
  return true;
}

/** `application/json`, with parameters or not (the SDK's isJsonContentType). */
const isJsonType = (type: string | undefined): boolean =>
  type !== undefined && type.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';

/** One JSON body, written once (no ETag, no framing): what the SDK's JSON response mode sends. */
function answer(res: Response, sessionId: string, message: object): void {
  if (res.writableEnded || res.destroyed) return;
  const body = JSON.stringify(message);
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'mcp-session-id': sessionId,
  });
  res.end(body);
}
