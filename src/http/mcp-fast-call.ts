import type { Request, Response } from 'express';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { callTool } from '../mcp/call.js';
import type { McpContext } from '../mcp/context.js';
import { noProgress } from '../mcp/tool.js';
import type { Caller } from '../events/principals.js';

/**
 * `tools/call` on an open 2025-11-25 session, answered by Colony itself with one JSON body — the call
 * agents make all day. Through the SDK's session transport a call costs a web Request built from the
 * node one, the JSON-RPC schema parse, a stream and an SSE frame around a single answer, and a Response
 * converted back: about a third of a whoami's time on the server, none of it Colony's work. The call
 * itself runs exactly as on the SDK path (callTool: scope, validation, confirmation, audit, group commit).
 *
 * Only a plain case takes this path; anything else goes to the SDK transport, which answers it as it
 * always did (errors included):
 *  - one JSON-RPC request object (no batch), `jsonrpc: "2.0"`, an id that is a string or an integer,
 *    `params.name` a string, `params.arguments` absent or an object, `params._meta` absent or an object
 *    without a `progressToken` (progress notifications need the SSE stream);
 *  - a client that accepts both JSON and SSE, a JSON content type, and no protocol-version header or one
 *    the SDK supports — the checks the SDK's transport makes before it reads a message.
 * The Streamable HTTP spec lets a server answer any POSTed request with `application/json` instead of a
 * stream; MCP clients accept both (`Accept` says so, and the SDK's transport asked for it).
 */
export function fastToolCall(ctx: McpContext, req: Request, res: Response, caller: Caller, sessionId: string): boolean {
  const call = plainToolCall(req);
  if (!call) return false;
  void callTool(ctx, caller, call.name, call.args, call.meta, noProgress).then(
    (result) => answer(res, sessionId, { result, jsonrpc: '2.0', id: call.id }),
    // callTool answers every failure as a tool error; a throw here is a bug: a JSON-RPC internal error, as the SDK answers it.
    () => answer(res, sessionId, { jsonrpc: '2.0', id: call.id, error: { code: -32603, message: 'Internal error' } }),
  );
  return true;
}

interface PlainCall {
  id: string | number;
  name: string;
  args: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
}

function plainToolCall(req: Request): PlainCall | null {
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if (!isJsonType(req.headers['content-type'])) return null;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) return null;
  const body = req.body as Record<string, unknown> | null;
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  const { id, params } = body;
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return null;
  if (!isPlainObject(params) || typeof params.name !== 'string') return null;
  const args = params.arguments ?? {};
  const meta = params._meta;
  if (!isPlainObject(args) || (meta !== undefined && !isPlainObject(meta))) return null;
  if (meta && 'progressToken' in meta) return null;
  return { id: id as string | number, name: params.name, args, meta };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `application/json`, with parameters or not (the SDK's isJsonContentType). */
const isJsonType = (type: string | undefined): boolean =>
  type !== undefined && type.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';

/** One JSON body, written once (no ETag, no framing): what the SDK's JSON response mode sends. */
function answer(res: Response, sessionId: string, message: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  const body = JSON.stringify(message);
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'mcp-session-id': sessionId,
  });
  res.end(body);
}
