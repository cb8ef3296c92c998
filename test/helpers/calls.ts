import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { App } from '../../src/app.js';
import { callTool, type ToolClient } from './mcp.js';

/**
 * Tool calls that must succeed or must be refused, through a real MCP client. `meta` is the call's
 * `_meta` (an idempotency key). A refusal is checked for its code (the text's `<Code>: ` prefix and, for a
 * tool with an output schema, `structuredContent.error.code`) and for having written nothing: the log's
 * head does not move.
 */
type Body = Record<string, unknown>;

const shown = (name: string, args: Body) => `${name}(${JSON.stringify(args).slice(0, 300)})`;

/**
 * A call that is not an MCP error (`isError` unset): its result, its first text block and its body
 * (structuredContent, or failing that the text's JSON). The xylocopa-style tools answer a refusal this
 * way too, with `{status: 'error', error_code, message}`; `ok` and `refusedWithText` tell them apart.
 */
export async function answer(
  client: ToolClient,
  name: string,
  args: Body = {},
  meta?: Body,
): Promise<{ result: CallToolResult; text: string; body: Body }> {
  const { result, body, text } = await callTool(client, name, args, meta);
  assert.ok(!result.isError, `${shown(name, args)} failed: ${text}`);
  return { result, text, body };
}

/** A call that must succeed: not an MCP error and not a `{status: 'error'}` answer. Returns the body. */
export async function ok(client: ToolClient, name: string, args: Body = {}, meta?: Body): Promise<Body> {
  const { body, text } = await answer(client, name, args, meta);
  assert.notEqual(body.status, 'error', `${shown(name, args)} failed: ${text}`);
  return body;
}

/** A call that must not be an MCP error; returns its text (which may be a xylocopa-style "not found"). */
export async function okText(client: ToolClient, name: string, args: Body = {}): Promise<string> {
  return (await answer(client, name, args)).text;
}

/** A refusal with `code` that wrote nothing; its text and the error's details (`{}` when it has none). */
export async function refusal(
  f: { app: App },
  client: ToolClient,
  name: string,
  args: Body,
  code: string,
  meta?: Body,
): Promise<{ text: string; details: Body }> {
  const head = f.app.engine.head().position;
  const { result, body, text } = await callTool(client, name, args, meta);
  assert.equal(result.isError, true, `${shown(name, args)} should be refused, got: ${text.slice(0, 300)}`);
  assert.ok(text.startsWith(`${code}: `), `${shown(name, args)}: expected ${code}, got ${text.slice(0, 300)}`);
  const error = body.error as { code: string; details?: Body } | undefined;
  if (error) assert.equal(error.code, code);
  assert.equal(f.app.engine.head().position, head, `${name} wrote nothing`);
  return { text, details: error?.details ?? {} };
}

/** A refusal with `code` that wrote nothing; returns its text. */
export async function refused(
  f: { app: App },
  client: ToolClient,
  name: string,
  args: Body,
  code: string,
  meta?: Body,
): Promise<string> {
  return (await refusal(f, client, name, args, code, meta)).text;
}

/**
 * A xylocopa-style refusal: an ordinary result whose text is exactly `text` and whose body is
 * `{status: 'error', error_code: code, message: text}`, and nothing written.
 */
export async function refusedWithText(
  f: { app: App },
  client: ToolClient,
  name: string,
  args: Body,
  text: string,
  code: string,
): Promise<void> {
  const head = f.app.engine.head().position;
  const r = await answer(client, name, args);
  assert.equal(r.text, text);
  assert.deepEqual(r.body, { status: 'error', error_code: code, message: text });
  assert.equal(f.app.engine.head().position, head, `${name} wrote nothing`);
}

/**
 * The owner's goal "Weekly report" with one task, "Send the report" (`leaf` merges into it), proposed and
 * approved; returns both ids.
 */
export async function approvedTask(owner: Client, leaf: Body = {}): Promise<{ goalId: number; taskId: number }> {
  const g = await ok(owner, 'create_goal', {
    title: 'Weekly report',
    description: 'Send the weekly report to the team.',
  });
  const p = await ok(owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: { title: 'Send the report', description: 'Send it through Brevo.', ...leaf },
  });
  await ok(owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' });
  const taskId = ((await ok(owner, 'get_goal', { goal_id: g.goal_id })).tasks_tree as { id: number }[])[0]!.id;
  return { goalId: g.goal_id as number, taskId };
}
