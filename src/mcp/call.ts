import { createHash } from 'node:crypto';
import type { CreateTaskResultV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { DomainError, invalidInput } from '../errors.js';
import { newCommandId } from '../engine/ids.js';
import { log } from '../log.js';
import { CommitFailedError } from '../engine/group-commit.js';
import { argsDigest, principalRefOf, type Outcome } from './audit.js';
import { actorOf, principalKey } from './auth.js';
import type { McpContext } from './context.js';
import { errorResult, okResult } from './results.js';
import { createdTask } from './tasks/index.js';
import { noProgress, type AnyTool, type Progress, type ToolLookup } from './tool.js';
import { type Caller } from '../events/principals.js';

/**
 * One tools/call, in order: who is calling (re-checked per call), is the tool there for them, is it in
 * the agent's scope (and may a quarantined agent call it), path policy, strict validation, confirmation
 * for destructive tools, then the handler. Whatever happens, exactly one audit row is written.
 */
export const IDEMPOTENCY_META_KEY = 'colony/idempotency_key';

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
function toolFor(ctx: Pick<McpContext, 'tools'>, caller: Caller, name: string): AnyTool | undefined {
  const tool = ctx.tools.get(name);
  return tool && (caller.kind === 'owner' || tool.surface === 'agent') ? tool : undefined;
}

export function callTool(
  ctx: McpContext,
  caller: Caller | null,
  name: string,
  rawArgs: Record<string, unknown>,
  meta?: Record<string, unknown>,
  progress?: Progress,
): Promise<CallToolResult>;
export function callTool(
  ctx: McpContext,
  caller: Caller | null,
  name: string,
  rawArgs: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
  progress: Progress,
  acceptsTask: boolean,
): Promise<CallToolResult | CreateTaskResultV2>;
export function callTool(
  ctx: McpContext,
  caller: Caller | null,
  name: string,
  rawArgs: Record<string, unknown>,
  meta?: Record<string, unknown>,
  progress: Progress = noProgress,
  /** The request accepts an MCP task instead of the result (2026-07-28 tasks extension): a long tool then answers with one. */
  acceptsTask = false,
): Promise<CallToolResult | CreateTaskResultV2> {
  // A grouped caller: concurrent calls' commands share one COMMIT, and this call answers only after its own committed.
  // A read tool runs no command (and one that did would commit on its own): it skips the grouping's bookkeeping.
  const call = () => callGrouped(ctx, caller, name, rawArgs, meta, progress, acceptsTask);
  const tool = ctx.tools.get(name);
  const answer = tool?.trust === 'read' ? call() : ctx.app.engine.group.run(call);
  return answer.then(
    async (result) => {
      try {
        await ctx.audit.written(); // answered only once its audit row is written
      } catch (e) {
        return errorResult(
          tool,
          new DomainError(
            'ErrAuditFailed',
            `the call ran but its audit row could not be written: ${(e as Error).message}`,
          ),
        ).result;
      }
      return result;
    },
    async (e: unknown) => {
      // A COMMIT that fails (an I/O error, a full disk) took the call's writes back: it answers as an
      // error, never as done, and the trail says so beside the row the handler's outcome left.
      const failed =
        e instanceof CommitFailedError
          ? new DomainError(
              'ErrCommitFailed',
              `the call's changes could not be written to disk and were rolled back: ${(e.cause as Error)?.message ?? e.message}`,
            )
          : e;
      const { result, code } = errorResult(tool, failed);
      log.error({ err: e, tool: name, code }, 'a tool call failed outside its handler');
      try {
        ctx.audit.record({
          at: ctx.app.engine.clock().toISOString(),
          principal: caller ? actorOf(caller) : 'anonymous',
          ...principalRefOf(caller),
          tool: name,
          argsDigest: argsDigest(rawArgs),
          outcome: 'error',
          errorCode: code,
          durationMs: 0,
          commandId: null,
        });
        await ctx.audit.written();
      } catch {
        // the trail is closed or failing: logged above and by the trail; the answer is the error already
      }
      return result;
    },
  );
}

async function callGrouped(
  ctx: McpContext,
  caller: Caller | null,
  name: string,
  rawArgs: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
  progress: Progress,
  acceptsTask: boolean,
): Promise<CallToolResult | CreateTaskResultV2> {
  const started = process.hrtime.bigint();
  const key = typeof meta?.[IDEMPOTENCY_META_KEY] === 'string' ? (meta[IDEMPOTENCY_META_KEY] as string) : undefined;
  // A keyed call's command id is only known once its arguments are (its scope + their digest); until then the audit row gets a fresh one.
  let commandId = newCommandId();
  let digest: string | undefined; // of the validated arguments once they exist, else of what was sent
  const tool = caller ? toolFor(ctx, caller, name) : undefined;
  const finish = <R>(outcome: Outcome, result: R, code: string | null): R => {
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    const principal = caller ? actorOf(caller) : 'anonymous';
    ctx.audit.record({
      at: ctx.app.engine.clock().toISOString(),
      principal,
      ...principalRefOf(caller),
      tool: name,
      argsDigest: digest ?? argsDigest(rawArgs),
      outcome,
      errorCode: code,
      durationMs,
      commandId,
    });
    // Writes only (reads would drown them), and only a known tool: an unknown name is the caller's text. Never the arguments.
    if (ctx.logCalls && tool && tool.trust !== 'read') {
      log.info(
        {
          principal,
          principalId: principalRefOf(caller).principalId,
          tool: tool.name,
          outcome,
          code,
          ms: Math.round(durationMs * 10) / 10,
        },
        'tool call',
      );
    }
    return result;
  };
  const refuse = (outcome: Outcome, e: unknown) => {
    const { result, code } = errorResult(tool, e);
    return finish(outcome, result, code);
  };
  if (!caller) return refuse('blocked', new DomainError('ErrUnauthorized', 'the token is missing, unknown or revoked'));
  if (!tool) return refuse('blocked', new DomainError('ErrToolNotFound', `no tool named ${name}`, { tool: name }));
  const denied = authorize(caller, tool);
  if (denied) return refuse('blocked', denied);
  try {
    checkShape(rawArgs);
    const { confirmation, rest } = splitConfirmation(tool, rawArgs);
    const parsed = tool.input.safeParse(ctx.paths.guard(withoutBlank(rest, tool.blankPathDefaults), tool.pathFields));
    if (!parsed.success)
      throw invalidInput(`invalid arguments for ${name}: ${summarize(parsed.error.issues)}`, {
        issues: parsed.error.issues,
      });
    digest = argsDigest(parsed.data);
    if (tool.trust === 'destructive') {
      if (confirmation === undefined)
        return finish('pending_confirmation', askConfirmation(ctx, caller, tool, parsed.data, digest), null);
      try {
        ctx.confirmations.redeem(confirmation, tool.name, digest, principalKey(caller));
      } catch (e) {
        return refuse('blocked', e);
      }
    }
    const scope = key === undefined ? undefined : idempotencyScope(caller, tool.name, key);
    if (scope !== undefined) commandId = `${scope}${digest}`;
    const command = {
      actor: actorOf(caller),
      commandId,
      record: key !== undefined,
      correlationId: commandId,
      idempotencyScope: scope,
    };
    const toolCtx = { app: ctx.app, caller, tools: ctx.tools, command, runtime: ctx.runtime, cwd: ctx.cwd, progress };
    let value: unknown;
    if (acceptsTask && tool.task) {
      // The work is started and committed; the task is its record in the log (src/mcp/tasks). One audit row, as for any call.
      const begun = await tool.task(toolCtx, parsed.data);
      if ('task' in begun) return finish('success', createdTask(ctx, caller, begun.task), null);
      value = begun.now;
    } else {
      value = await tool.handler(toolCtx, parsed.data);
    }
    // codomyrmex-shaped tools answer refusals as ordinary results: the audit still records them as errors.
    const shaped = shapedErrorCode(value);
    return finish(shaped ? 'error' : 'success', okResult(tool, value), shaped);
  } catch (e) {
    return refuse('error', e);
  }
}

/**
 * An idempotency key belongs to one principal and one tool (payment APIs scope theirs the same way): the
 * same key from another principal, another tenant or for another tool is another command. The command
 * id is this scope plus the digest of the validated arguments, so the same key with other arguments is
 * refused inside the command's transaction (ErrIdempotencyConflict), never answered with a stranger's result.
 */
export function idempotencyScope(caller: Caller, tool: string, key: string): string {
  return `idem:${createHash('sha256')
    .update(`${principalKey(caller)}\0${tool}\0${key}`)
    .digest('hex')}:`;
}

/** How deep arguments may nest: validation recurses, and a hostile client could nest until the stack overflows. */
export const MAX_ARGS_DEPTH = 100;

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

function authorize(caller: Caller, tool: AnyTool): DomainError | null {
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

function askConfirmation(
  ctx: McpContext,
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

const shapedErrorCode = (value: unknown): string | null => {
  const v = value as { status?: unknown; error_code?: unknown } | null;
  return v?.status === 'error' && typeof v.error_code === 'string' ? v.error_code : null;
};

const summarize = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): string =>
  issues.map((i) => `${i.path.length ? i.path.map(String).join('.') : '<root>'}: ${i.message}`).join('; ');
