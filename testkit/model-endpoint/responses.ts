import type { ServerResponse } from 'node:http';
import { buildTurn } from './conversation.js';
import { asArray, asRecord, asString, newId, parseArguments, sendJson, SseWriter, textOf } from './http.js';
import { DEFAULT_USAGE, type NormalisedMessage, type ScriptReply, type ScriptTurnInput } from './types.js';

/**
 * OpenAI Responses API (`POST /v1/responses`), as Codex speaks it: the prompt is `input` items (messages with
 * developer/user roles, function_call and function_call_output items, reasoning items to ignore), and
 * `instructions` is the system prompt. Codex's own `<environment_context>` user message counts as user text,
 * but the real prompt follows it, so `lastUserText` is still the prompt.
 */
export function parseResponses(body: Record<string, unknown>): ScriptTurnInput {
  const system = [asString(body.instructions)];
  const messages: NormalisedMessage[] = [];
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  for (const raw of asArray(input)) {
    const item = asRecord(raw);
    const type = asString(item.type) || 'message';
    if (type === 'message') {
      const role = asString(item.role);
      const text = textOf(item.content);
      if (role === 'system' || role === 'developer') system.push(text);
      else messages.push({ role: role === 'assistant' ? 'assistant' : 'user', text });
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const args = type === 'function_call' ? parseArguments(item.arguments) : { input: item.input };
      const name = qualified(asString(item.namespace), asString(item.name));
      messages.push({ role: 'assistant', toolCall: { id: asString(item.call_id), name, input: args } });
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const output = asRecord(item.output);
      const text = typeof item.output === 'string' ? item.output : textOf(output.content ?? item.output);
      messages.push({ role: 'tool', toolResult: { id: asString(item.call_id), text } });
    }
  }
  return buildTurn({
    api: 'responses',
    model: asString(body.model),
    toolNames: [...toolsOf(body.tools).keys()],
    system,
    messages,
    stream: body.stream === true,
  });
}

/**
 * Codex groups each MCP server's tools in a `namespace` tool (`mcp__colony` holding `get_goal`), and the model
 * calls one with `{name: 'get_goal', namespace: 'mcp__colony'}`. Scripts see the joined name,
 * `mcp__colony__get_goal` (the same as Claude Code's); a bare `get_goal` is Codex's own built-in goal tool.
 */
function qualified(namespace: string, name: string): string {
  return namespace ? `${namespace}__${name}` : name;
}

type Target = { namespace: string; name: string };

/** The offered tools by the name scripts see, each with the namespace and name a call must carry. */
function toolsOf(tools: unknown, namespace = ''): Map<string, Target> {
  const found = new Map<string, Target>();
  for (const raw of asArray(tools)) {
    const tool = asRecord(raw);
    const name = asString(tool.name);
    if (tool.type === 'namespace') for (const [key, value] of toolsOf(tool.tools, name)) found.set(key, value);
    else if (name) found.set(qualified(namespace, name), { namespace, name });
  }
  return found;
}

const ERROR_CODES: Record<number, [type: string, code: string]> = {
  400: ['invalid_request_error', 'invalid_request'],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['invalid_request_error', 'unsupported_country_region_territory'],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['rate_limit_error', 'rate_limit_exceeded'],
};

/** The OpenAI error body, shared by the Responses and Chat Completions APIs. */
export function openaiError(res: ServerResponse, status: number, message: string): void {
  const [type, code] = ERROR_CODES[status] ?? ['server_error', 'server_error'];
  sendJson(res, status, { error: { message, type, code, param: null } });
}

type OutputItem =
  | { id: string; type: 'message'; role: 'assistant'; status: 'completed'; content: unknown[] }
  | {
      id: string;
      type: 'function_call';
      call_id: string;
      name: string;
      namespace?: string;
      arguments: string;
      status: 'completed';
    };

function outputOf(reply: ScriptReply, offered: Map<string, Target>): OutputItem[] {
  const items: OutputItem[] = [];
  if (reply.text !== undefined) {
    const content = [{ type: 'output_text', text: reply.text, annotations: [] }];
    items.push({ id: newId('msg_'), type: 'message', role: 'assistant', status: 'completed', content });
  }
  for (const call of reply.toolCalls ?? []) {
    const args = JSON.stringify(call.input);
    const target = offered.get(call.name) ?? { namespace: '', name: call.name };
    const where = target.namespace ? { namespace: target.namespace } : {};
    const item = { id: newId('fc_'), call_id: newId('call_'), name: target.name, ...where, arguments: args };
    items.push({ ...item, type: 'function_call', status: 'completed' });
  }
  return items;
}

/** Writes the reply as a response object, or as the SSE events Codex folds into items. */
export function writeResponses(
  res: ServerResponse,
  turn: ScriptTurnInput,
  reply: ScriptReply,
  body: Record<string, unknown>,
): void {
  const { input, output } = reply.usage ?? DEFAULT_USAGE;
  const items = outputOf(reply, toolsOf(body.tools));
  const usage = {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
  const base = { id: newId('resp_'), object: 'response', created_at: Math.floor(Date.now() / 1000), model: turn.model };
  const done = { ...base, status: 'completed', output: items, usage };
  if (!turn.stream) {
    sendJson(res, 200, done);
    return;
  }
  const sse = new SseWriter(res);
  let seq = 0;
  const emit = (type: string, data: Record<string, unknown>) =>
    sse.event(type, { type, sequence_number: seq++, ...data });
  emit('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  emit('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } });
  items.forEach((item, output_index) => {
    if (item.type === 'message') {
      const text = asString(asRecord(item.content[0]).text);
      const at = { item_id: item.id, output_index, content_index: 0 };
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      emit('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } });
      emit('response.output_text.delta', { ...at, delta: text });
      emit('response.output_text.done', { ...at, text });
      emit('response.content_part.done', { ...at, part: item.content[0] });
    } else {
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      emit('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: item.arguments });
      emit('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: item.arguments });
    }
    emit('response.output_item.done', { output_index, item });
  });
  emit('response.completed', { response: done });
  sse.end();
}
