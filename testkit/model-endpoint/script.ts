import { completedRounds } from './conversation.js';
import type { ModelScript, ScriptReply, ScriptTurnInput } from './types.js';

/**
 * Helpers for writing scripts that work with every CLI.
 *
 * MCP tool names differ per CLI: Claude Code sends `mcp__<server>__<tool>`; Codex offers `<tool>` inside an
 * `mcp__<server>` namespace, which the endpoint shows as `mcp__<server>__<tool>` too; OpenCode sends
 * `<server>_<tool>`. `findTool(turn.toolNames, 'get_goal')` finds the one this CLI offered. A server-qualified
 * name wins over an exact one: Codex has a built-in `get_goal` beside an MCP tool of that name.
 */
export function findTool(toolNames: string[], suffix: string): string | undefined {
  for (const separator of ['__', '_', '.', '/', ':']) {
    const found = toolNames.find((name) => name.endsWith(`${separator}${suffix}`));
    if (found) return found;
  }
  return toolNames.find((name) => name === suffix);
}

/** Like findTool, but a missing tool is the test's failure, reported with what was offered. */
export function requireTool(toolNames: string[], suffix: string): string {
  const found = findTool(toolNames, suffix);
  if (!found) throw new Error(`no tool ending in ${suffix} among: ${toolNames.join(', ')}`);
  return found;
}

/**
 * A side request is one the CLI makes for itself, not for the agent's turn. OpenCode asks for a session title on
 * a new session's first prompt, offering no tools, with a system prompt starting "You are a title generator";
 * Claude Code (-p) and Codex (exec) made none in our runs but may in other modes (a topic, a summary,
 * compaction). Every real agent turn offers tools (each CLI's built-ins at least; a denied tool is left out,
 * but OpenCode with every built-in denied still offers the MCP tools), so "no tools offered" is the test.
 */
export function isSideRequest(turn: ScriptTurnInput): boolean {
  return turn.toolNames.length === 0;
}

/** What a side request gets: short plain text, good as a title, and harmless anywhere else. */
export const SIDE_REPLY: ScriptReply = { text: 'Scripted session' };

export type Step = ScriptReply | ((turn: ScriptTurnInput) => ScriptReply | Promise<ScriptReply>);

/**
 * Replies step by step within one turn of the conversation: step N answers the request that follows N completed
 * tool rounds since the last user prompt. The step is read from the request itself, so it needs no state, is
 * right when a CLI retries a request, and starts again at step 0 on a resumed session's new prompt (branch on
 * `turn.lastUserText` for a different follow-up). Side requests get SIDE_REPLY and do not advance anything.
 * Past the last step the reply is the text `script exhausted at step N`, never another tool call, so a
 * CLI cannot loop.
 */
export function sequence(...steps: Step[]): ModelScript {
  return (turn) => {
    if (isSideRequest(turn)) return SIDE_REPLY;
    const index = completedRounds(turn.messages);
    const step = steps[index];
    if (step === undefined) return { text: `script exhausted at step ${index}` };
    return typeof step === 'function' ? step(turn) : step;
  };
}

/**
 * The common test script: call the MCP tool ending in `suffix` with `input`, then finish with `finalText`.
 * If the CLI did not offer the tool the first step answers text saying so, so the run ends instead of hanging.
 */
export function callToolThenFinish(
  suffix: string,
  input: Record<string, unknown> = {},
  finalText = 'done',
): ModelScript {
  return sequence(
    (turn) => {
      const name = findTool(turn.toolNames, suffix);
      return name ? { toolCalls: [{ name, input }] } : { text: `tool ${suffix} not offered` };
    },
    { text: finalText },
  );
}
