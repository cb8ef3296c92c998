import type { ModelApi, NormalisedMessage, ScriptTurnInput, ToolResult } from './types.js';

/**
 * Builds the script's view of one request from the API-specific parse: names each tool result after its call
 * (the wire carries only the call id), and cuts out the turn now running (everything after the last user text).
 */
export function buildTurn(parts: {
  api: ModelApi;
  model: string;
  toolNames: string[];
  system: string[];
  messages: NormalisedMessage[];
  stream: boolean;
}): ScriptTurnInput {
  const namesById = new Map<string, string>();
  for (const m of parts.messages) if (m.toolCall?.id) namesById.set(m.toolCall.id, m.toolCall.name);
  const messages = parts.messages.map((m) => {
    if (!m.toolResult || m.toolResult.name || !m.toolResult.id) return m;
    const name = namesById.get(m.toolResult.id);
    return name ? { ...m, toolResult: { ...m.toolResult, name } } : m;
  });
  const lastUser = lastUserIndex(messages);
  const toolResults: ToolResult[] = messages
    .slice(lastUser + 1)
    .flatMap((m) => (m.role === 'tool' && m.toolResult ? [m.toolResult] : []));
  return {
    api: parts.api,
    model: parts.model,
    toolNames: parts.toolNames,
    messages,
    system: parts.system.filter((s) => s !== '').join('\n'),
    lastUserText: lastUser >= 0 ? userTextAt(messages, lastUser) : '',
    toolResults,
    stream: parts.stream,
  };
}

/** Index of the last user text entry; -1 when there is none. */
export function lastUserIndex(messages: NormalisedMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  return -1;
}

/** The user message ending at `end`, all its consecutive text parts joined (one wire message may hold several). */
function userTextAt(messages: NormalisedMessage[], end: number): string {
  let start = end;
  while (start > 0 && messages[start - 1]!.role === 'user') start--;
  return messages
    .slice(start, end + 1)
    .map((m) => m.text ?? '')
    .join('\n');
}

/**
 * How many tool rounds the running turn has completed: the groups of consecutive tool results after the last
 * user text. A round of two parallel calls has two results but is one step.
 */
export function completedRounds(messages: NormalisedMessage[]): number {
  let rounds = 0;
  let previous: NormalisedMessage['role'] | undefined;
  for (const m of messages.slice(lastUserIndex(messages) + 1)) {
    if (m.role === 'tool' && previous !== 'tool') rounds++;
    previous = m.role;
  }
  return rounds;
}
