import type { ServerResponse } from 'node:http';
import { buildTurn } from './conversation.js';
import { asArray, asRecord, asString, newId, parseArguments, sendJson, SseWriter, textOf } from './http.js';
import { DEFAULT_USAGE, type NormalisedMessage, type ScriptReply, type ScriptTurnInput } from './types.js';

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), as OpenCode's openai-compatible provider speaks it:
 * assistant messages carry `tool_calls`, each result is a `role: 'tool'` message with `tool_call_id`.
 */
export function parseChat(body: Record<string, unknown>): ScriptTurnInput {
  const system: string[] = [];
  const messages: NormalisedMessage[] = [];
  for (const raw of asArray(body.messages)) {
    const message = asRecord(raw);
    const role = asString(message.role);
    const text = textOf(message.content);
    if (role === 'system' || role === 'developer') {
      system.push(text);
    } else if (role === 'tool') {
      messages.push({ role: 'tool', toolResult: { id: asString(message.tool_call_id), text } });
    } else if (role === 'assistant') {
      if (text) messages.push({ role: 'assistant', text });
      for (const rawCall of asArray(message.tool_calls)) {
        const call = asRecord(rawCall);
        const fn = asRecord(call.function);
        const toolCall = { id: asString(call.id), name: asString(fn.name), input: parseArguments(fn.arguments) };
        messages.push({ role: 'assistant', toolCall });
      }
    } else {
      messages.push({ role: 'user', text });
    }
  }
  return buildTurn({
    api: 'chat',
    model: asString(body.model),
    toolNames: asArray(body.tools).map((t) => asString(asRecord(asRecord(t).function).name)),
    system,
    messages,
    stream: body.stream === true,
  });
}

/** Writes the reply as one chat.completion, or as chunks ending with a usage-only chunk and `[DONE]`. */
export function writeChat(res: ServerResponse, turn: ScriptTurnInput, reply: ScriptReply): void {
  const { input, output } = reply.usage ?? DEFAULT_USAGE;
  const usage = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
  const calls = (reply.toolCalls ?? []).map((call) => ({
    id: newId('call_'),
    type: 'function' as const,
    function: { name: call.name, arguments: JSON.stringify(call.input) },
  }));
  const finish = calls.length > 0 ? 'tool_calls' : 'stop';
  const base = { id: newId('chatcmpl-'), created: Math.floor(Date.now() / 1000), model: turn.model };
  if (!turn.stream) {
    const message = {
      role: 'assistant',
      content: reply.text ?? null,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    };
    const choice = { index: 0, message, finish_reason: finish };
    sendJson(res, 200, { ...base, object: 'chat.completion', choices: [choice], usage });
    return;
  }
  const sse = new SseWriter(res);
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    sse.event(undefined, {
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
  chunk({ role: 'assistant', content: '' });
  if (reply.text !== undefined) chunk({ content: reply.text });
  calls.forEach((call, index) => {
    chunk({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }],
    });
    chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] });
  });
  chunk({}, finish);
  sse.event(undefined, { ...base, object: 'chat.completion.chunk', choices: [], usage });
  sse.event(undefined, '[DONE]');
  sse.end();
}
