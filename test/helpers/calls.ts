import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { App } from '../../src/app.js';
import { textOf } from './mcp.js';

/**
 * Tool calls that must succeed or must be refused, through a real MCP Client. `meta` is the call's
 * `_meta` (an idempotency key). A refusal is checked for its code (the text's `<Code>: ` prefix) and for
 * having written nothing: the log's head does not move.
 */
type Body = Record<string, unknown>;

async function call(client: Client, name: string, args: Body, meta?: Body): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
}

export async function ok(client: Client, name: string, args: Body = {}, meta?: Body): Promise<Body> {
  const result = await call(client, name, args, meta);
  assert.ok(!result.isError, `${name}(${JSON.stringify(args).slice(0, 300)}) failed: ${textOf(result)}`);
  return (result.structuredContent ?? JSON.parse(textOf(result) || '{}')) as Body;
}

export async function refused(
  f: { app: App },
  client: Client,
  name: string,
  args: Body,
  code: string,
  meta?: Body,
): Promise<string> {
  const head = f.app.engine.head().position;
  const result = await call(client, name, args, meta);
  const text = textOf(result);
  assert.equal(result.isError, true, `${name} should be refused, got: ${text.slice(0, 300)}`);
  assert.ok(text.startsWith(`${code}: `), `${name}: expected ${code}, got ${text.slice(0, 300)}`);
  assert.equal(f.app.engine.head().position, head, `${name} wrote nothing`);
  return text;
}
