import type { ServerResponse } from 'node:http';
import { buildTurn } from './conversation.js';
import { asArray, asRecord, asString, newId, sendJson, SseWriter, textOf } from './http.js';
import { DEFAULT_USAGE, type NormalisedMessage, type ScriptReply, type ScriptTurnInput } from './types.js';

/**
 * Anthropic Messages API (`POST /v1/messages`), as Claude Code speaks it: `system` is a string or text blocks,
 * and newer Claude Code versions also put `role: 'system'` entries inside `messages` (read into `system`).
 * A user message holding tool_result blocks yields `tool` entries only: the system-reminder text Claude Code
 * adds beside results is not a new prompt and must not restart the script's step count.
 */
export function parseAnthropic(body: Record<string, unknown>): ScriptTurnInput {
  const system = [textOf(body.system)];
  const messages: NormalisedMessage[] = [];
  for (const raw of asArray(body.messages)) {
    const message = asRecord(raw);
    const role = asString(message.role);
    if (role === 'system') {
      system.push(textOf(message.content));
      continue;
    }
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    const parsed = asArray(blocks).map(asRecord);
    const hasResults = parsed.some((b) => b.type === 'tool_result');
    for (const block of parsed) {
      if (block.type === 'text' && !(role === 'user' && hasResults)) {
        messages.push({ role: role === 'assistant' ? 'assistant' : 'user', text: asString(block.text) });
      } else if (block.type === 'tool_use') {
        const call = { id: asString(block.id), name: asString(block.name), input: asRecord(block.input) };
        messages.push({ role: 'assistant', toolCall: call });
      } else if (block.type === 'tool_result') {
        const result = {
          id: asString(block.tool_use_id),
          text: textOf(block.content),
          isError: block.is_error === true,
        };
        messages.push({ role: 'tool', toolResult: result });
      }
    }
  }
  const offered = asArray(body.tools).map((t) => asString(asRecord(t).name));
  const texts = [...system, ...messages.map((m) => m.text ?? '')];
  const deferred = deferredToolNames(texts).filter((name) => !offered.includes(name));
  return buildTurn({
    api: 'anthropic',
    model: asString(body.model),
    toolNames: [...offered, ...deferred],
    system,
    messages,
    stream: body.stream === true,
  });
}

/**
 * Claude Code's tool search (on by default; ENABLE_TOOL_SEARCH=false turns it off) leaves MCP tools out of
 * `tools` and names them in a system-reminder instead. Claude Code still runs a deferred tool called by name
 * without a ToolSearch first, so for a script they are offered tools like the others.
 */
function deferredToolNames(texts: string[]): string[] {
  const names: string[] = [];
  for (const text of texts) {
    for (const match of text.matchAll(
      /deferred tools are now available via ToolSearch[^\n]*\n([\s\S]*?)(?:<\/system-reminder>|$)/g,
    )) {
      for (const line of (match[1] ?? '').split('\n')) {
        const name = line.trim();
        if (/^[\w.-]+$/.test(name) && !names.includes(name)) names.push(name);
      }
    }
  }
  return names;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export function anthropicError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } });
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: object };

function blocksOf(reply: ScriptReply): Block[] {
  const blocks: Block[] = [];
  if (reply.text !== undefined) blocks.push({ type: 'text', text: reply.text });
  for (const call of reply.toolCalls ?? []) blocks.push({ type: 'tool_use', id: newId('toolu_'), ...call });
  return blocks;
}

/** Writes the reply as one JSON message, or as the SSE event sequence the Anthropic SDK assembles. */
export function writeAnthropic(res: ServerResponse, turn: ScriptTurnInput, reply: ScriptReply): void {
  const usage = reply.usage ?? DEFAULT_USAGE;
  const blocks = blocksOf(reply);
  const stopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const tokens = {
    input_tokens: usage.input,
    output_tokens: usage.output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  const message = { id: newId('msg_'), type: 'message', role: 'assistant', model: turn.model };
  if (!turn.stream) {
    sendJson(res, 200, { ...message, content: blocks, stop_reason: stopReason, stop_sequence: null, usage: tokens });
    return;
  }
  const sse = new SseWriter(res);
  const start = {
    ...message,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...tokens, output_tokens: 0 },
  };
  sse.event('message_start', { type: 'message_start', message: start });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      sse.event('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      });
      const delta = { type: 'text_delta', text: block.text };
      sse.event('content_block_delta', { type: 'content_block_delta', index, delta });
    } else {
      const contentBlock = { ...block, input: {} };
      sse.event('content_block_start', { type: 'content_block_start', index, content_block: contentBlock });
      const delta = { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
      sse.event('content_block_delta', { type: 'content_block_delta', index, delta });
    }
    sse.event('content_block_stop', { type: 'content_block_stop', index });
  });
  const delta = { stop_reason: stopReason, stop_sequence: null };
  sse.event('message_delta', { type: 'message_delta', delta, usage: tokens });
  sse.event('message_stop', { type: 'message_stop' });
  sse.end();
}

/** `POST /v1/messages/count_tokens`: a rough count (4 characters a token) is enough for a client's budgeting. */
export function countTokens(res: ServerResponse, body: Record<string, unknown>): void {
  const size = JSON.stringify(body.messages ?? []).length + JSON.stringify(body.system ?? '').length;
  sendJson(res, 200, { input_tokens: Math.ceil(size / 4) });
}
