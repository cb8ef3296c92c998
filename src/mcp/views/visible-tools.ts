import type { Caller } from '../../events/principals.js';
import type { AnyTool, ToolLookup } from '../tool.js';

/**
 * What tools/list (and the capability catalog) shows: owners every tool, an agent only the agent-surface
 * tools in its tool scope — what it can actually call, so a model is not offered tools that are refused.
 */
export function visibleTools(ctx: { tools: ToolLookup }, caller: Caller): AnyTool[] {
  return ctx.tools
    .list()
    .filter((t) => caller.kind === 'owner' || (t.surface === 'agent' && caller.toolScope.includes(t.name)));
}

/**
 * The tool a call names, if it exists for the caller's kind. Wider than visibleTools on purpose: an
 * agent calling an agent tool outside its scope gets ErrToolNotInScope with the fix, not "no tool named".
 */
export function toolFor(ctx: { tools: ToolLookup }, caller: Caller, name: string): AnyTool | undefined {
  const tool = ctx.tools.get(name);
  return tool && (caller.kind === 'owner' || tool.surface === 'agent') ? tool : undefined;
}
