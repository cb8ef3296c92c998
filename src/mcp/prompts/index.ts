import { DomainError, invalidInput } from '../../errors.js';
import type { McpContext } from '../context.js';
import { agentHealthCheck } from './agent-health.js';
import { channelOverview } from './channel-overview.js';
import { createGoalPrompt } from './create-goal.js';
import { debugAgent } from './debug-agent.js';
import { dailyDigest } from './digest.js';
import type { PromptDefinition, PromptEntry, PromptResult } from './types.js';
import { type Caller } from '../../events/principals.js';

/**
 * MCP prompts: SynapBus's four (daily-digest, agent-health-check, channel-overview,
 * debug-agent — its argument name agent_name kept) over Colony's data, plus create-goal. Plain objects
 * shaped like prompts/list and prompts/get, for the server to register under both protocol revisions.
 *
 * Scope like tools/list: an agent is offered a prompt only when every tool that shows its data is in its
 * tool scope (`needs`), and getting one outside it is ErrToolNotInScope with the owner's fix. Arguments
 * are checked like a tool's strict schema: unknown or non-text arguments, a missing required one, or
 * one over MAX_ARGUMENT characters are ErrInvalidInput naming it (MCP's -32602 Invalid params).
 */
export type { PromptArgument, PromptEntry, PromptMessage, PromptResult } from './types.js';

/** SynapBus's order, then Colony's own. */
const PROMPTS: readonly PromptDefinition[] = [
  dailyDigest,
  agentHealthCheck,
  channelOverview,
  debugAgent,
  createGoalPrompt,
];
export const MAX_ARGUMENT = 16_000;

const allowed = (caller: Caller, p: PromptDefinition): boolean =>
  caller.kind === 'owner' || p.needs.every((t) => caller.toolScope.includes(t));

export function listPrompts(caller: Caller): PromptEntry[] {
  return PROMPTS.filter((p) => allowed(caller, p)).map((p) => structuredClone(p.entry));
}

export function getPrompt(ctx: McpContext, caller: Caller, name: string, args: Record<string, string>): PromptResult {
  const prompt = PROMPTS.find((p) => p.entry.name === name);
  if (!prompt) {
    const names =
      listPrompts(caller)
        .map((p) => p.name)
        .join(', ') || 'none';
    throw invalidInput(
      `unknown prompt ${JSON.stringify(String(name).slice(0, 100))}; the prompts you can get: ${names}`,
      { prompt: String(name).slice(0, 100) },
    );
  }
  if (!allowed(caller, prompt) && caller.kind === 'agent') {
    const missing = prompt.needs.filter((t) => !caller.toolScope.includes(t));
    const fix = `colony agents update ${caller.name} --tools ${[...caller.toolScope, ...missing].join(',')}`;
    throw new DomainError(
      'ErrToolNotInScope',
      `prompt ${name} needs ${missing.join(', ')} in the tool scope of agent ${caller.name}; the owner can add it: ${fix}`,
      { prompt: name, tools: missing, tool_scope: caller.toolScope, fix },
    );
  }
  return prompt.render(ctx, caller, checkedArgs(prompt, args ?? {}));
}

function checkedArgs(prompt: PromptDefinition, args: Record<string, unknown>): Record<string, string> {
  const name = prompt.entry.name;
  const declared = prompt.entry.arguments;
  const list = declared.map((a) => a.name).join(', ') || 'none';
  for (const [key, value] of Object.entries(args)) {
    if (!declared.some((a) => a.name === key))
      throw invalidInput(
        `prompt ${name} has no argument ${JSON.stringify(key.slice(0, 100))}; its arguments: ${list}`,
        { prompt: name, argument: key.slice(0, 100) },
      );
    if (typeof value !== 'string')
      throw invalidInput(`prompt ${name}: argument ${key} must be text`, { prompt: name, argument: key });
    if (value.includes('\u0000'))
      throw invalidInput(`prompt ${name}: argument ${key} contains a NUL character`, { prompt: name, argument: key });
    if (value.length > MAX_ARGUMENT)
      throw invalidInput(`prompt ${name}: argument ${key} is longer than ${MAX_ARGUMENT} characters`, {
        prompt: name,
        argument: key,
      });
  }
  for (const a of declared) {
    if (a.required && (typeof args[a.name] !== 'string' || (args[a.name] as string).trim() === '')) {
      throw invalidInput(`prompt ${name} needs argument ${a.name}: ${a.description}`, {
        prompt: name,
        argument: a.name,
      });
    }
  }
  return args as Record<string, string>;
}
