import { callTool } from './call.js';
import type { McpContext } from './context.js';
import { noProgress } from './tool.js';
import type { Caller } from '../events/principals.js';

/**
 * `tools/call` answered by Colony itself, outside the SDK's dispatch — the call agents make all day, on a
 * 2025-11-25 connection already initialized (an HTTP session: http/mcp-fast-call.ts; stdio:
 * mcp/stdio-fast-call.ts). Through the SDK a call costs a schema parse of the message, the server's
 * dispatch and, over HTTP, a web Request/Response and an SSE frame around one answer: most of a read
 * call's time, none of it Colony's work. The call itself runs exactly as on the SDK path (callTool:
 * scope, validation, confirmation, audit, group commit), so it answers the same.
 *
 * Only the plain case is taken; anything else stays with the SDK, which answers it as it always did:
 * one JSON-RPC request object (no batch), `jsonrpc: "2.0"`, an id that is a string or a safe integer,
 * `params.name` a string, `params.arguments` absent or an object, `params._meta` absent or an object
 * without a `progressToken` (progress notifications go through the SDK's request context).
 */
export interface PlainCall {
  id: string | number;
  name: string;
  args: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
}

export function plainToolCall(message: unknown): PlainCall | null {
  if (!isPlainObject(message) || message.jsonrpc !== '2.0' || message.method !== 'tools/call') return null;
  const { id, params } = message;
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return null;
  if (!isPlainObject(params) || typeof params.name !== 'string') return null;
  const args = params.arguments ?? {};
  const meta = params._meta;
  if (!isPlainObject(args) || (meta !== undefined && !isPlainObject(meta))) return null;
  if (meta && 'progressToken' in meta) return null;
  return { id: id as string | number, name: params.name, args, meta };
}

/** The JSON-RPC answer to a plain call: its result, or — should callTool ever throw — an internal error, as the SDK answers one. */
export function answerToolCall(ctx: McpContext, caller: Caller | null, call: PlainCall): Promise<object> {
  return callTool(ctx, caller, call.name, call.args, call.meta, noProgress).then(
    (result) => ({ result, jsonrpc: '2.0', id: call.id }),
    () => ({ jsonrpc: '2.0', id: call.id, error: { code: -32603, message: 'Internal error' } }),
  );
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
