import type { CallToolResult } from '@modelcontextprotocol/server';
import { DomainError, invalidInput } from '../errors.js';
import type { Caller } from '../events/principals.js';
import { principalKey } from './auth.js';
import type { McpContext } from './context.js';
import type { AnyTool } from './tool.js';

/**
 * What a tools/call must pass before its handler runs: the agent's scope and quarantine, the shape of
 * the arguments, the path policy and the tool's schema, and a destructive tool's confirmation.
 */

/** How deep arguments may nest: validation recurses, and a hostile client could nest until the stack overflows. */
export const MAX_ARGS_DEPTH = 100;

/** Is the tool in the agent's scope, and may a quarantined agent call it? Owners may call every tool. */
export function authorize(caller: Caller, tool: AnyTool): DomainError | null {
  if (caller.kind !== 'agent') return null;
  if (!caller.toolScope.includes(tool.name)) {
    // The agent cannot fix this itself, so the message says what its owner would run (its whole new scope: --tools replaces).
    const fix = `colony agents update ${caller.name} --tools ${[...caller.toolScope, tool.name].join(',')}`;
    return new DomainError(
      'ErrToolNotInScope',
      `${tool.name} is not in the tool scope of agent ${caller.name}; the owner can add it: ${fix}`,
      { tool: tool.name, tool_scope: caller.toolScope, fix },
    );
  }
  if (caller.quarantined && tool.trust !== 'read') {
    return new DomainError(
      'ErrAgentQuarantined',
      `agent ${caller.name} is quarantined: only read tools are allowed until an owner lifts it`,
    );
  }
  return null;
}

/**
 * The call's arguments as the tool's schema takes them, after the shape check and the path policy, and
 * the confirmation token a destructive tool's second call carries (taken out before the schema runs).
 */
export function validArgs(
  ctx: Pick<McpContext, 'paths'>,
  tool: AnyTool,
  rawArgs: Record<string, unknown>,
): { args: unknown; confirmation?: string } {
  checkShape(rawArgs);
  const { confirmation, rest } = splitConfirmation(tool, rawArgs);
  const parsed = tool.input.safeParse(ctx.paths.guard(withoutBlank(rest, tool.blankPathDefaults), tool.pathFields));
  if (!parsed.success)
    throw invalidInput(`invalid arguments for ${tool.name}: ${summarize(parsed.error.issues)}`, {
      issues: parsed.error.issues,
    });
  return { args: parsed.data, confirmation };
}

/** Before any schema runs: nesting within MAX_ARGS_DEPTH (checked without recursion) and no NUL in any text, which SQLite and FTS mishandle. */
function checkShape(args: unknown): void {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: args, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000'))
        throw invalidInput(`${path || 'an argument'} contains a NUL character`, { field: path });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_ARGS_DEPTH)
      throw invalidInput(`arguments nest deeper than ${MAX_ARGS_DEPTH} levels (at ${path})`, {
        field: path,
        max_depth: MAX_ARGS_DEPTH,
      });
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) throw invalidInput(`an argument name contains a NUL character`);
      stack.push({
        value: v,
        depth: depth + 1,
        path: Array.isArray(value) ? `${path}[${k}]` : path ? `${path}.${k}` : k,
      });
    }
  }
}

function splitConfirmation(
  tool: AnyTool,
  args: Record<string, unknown>,
): { confirmation?: string; rest: Record<string, unknown> } {
  if (tool.trust !== 'destructive' || !('confirmation_token' in args)) return { rest: args };
  const { confirmation_token: token, ...rest } = args;
  if (typeof token !== 'string' || token === '')
    throw invalidInput('confirmation_token must be a non-empty string', { field: 'confirmation_token' });
  return { confirmation: token, rest };
}

/** A destructive tool's first answer: a one-use token bound to this caller, this tool and these arguments. */
export function askConfirmation(
  ctx: Pick<McpContext, 'confirmations'>,
  caller: Caller,
  tool: AnyTool,
  args: unknown,
  digest: string,
): CallToolResult {
  const token = ctx.confirmations.issue(tool.name, digest, principalKey(caller));
  const body = {
    confirmation_required: true,
    tool_name: tool.name,
    args_preview: args,
    confirm_token: token,
    message: `Destructive tool '${tool.name}' requires confirmation. Call again with the same arguments and 'confirmation_token': '${token}' within 60 s.`,
  };
  return { content: [{ type: 'text', text: body.message }], structuredContent: body };
}

const withoutBlank = (args: Record<string, unknown>, fields: readonly string[] = []): Record<string, unknown> =>
  fields.some((f) => args[f] === '')
    ? Object.fromEntries(Object.entries(args).filter(([k, v]) => !(v === '' && fields.includes(k))))
    : args;

/** codomyrmex-shaped tools answer refusals as ordinary results (`status: "error"`): the audit still records them as errors. */
export const shapedErrorCode = (value: unknown): string | null => {
  const v = value as { status?: unknown; error_code?: unknown } | null;
  return v?.status === 'error' && typeof v.error_code === 'string' ? v.error_code : null;
};

const summarize = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): string =>
  issues.map((i) => `${i.path.length ? i.path.map(String).join('.') : '<root>'}: ${i.message}`).join('; ');
