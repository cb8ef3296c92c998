import { createHash } from 'node:crypto';
import type { CreateTaskResultV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { DomainError } from '../errors.js';
import { CommitFailedError } from '../engine/group-batch.js';
import { newCommandId } from '../engine/ids.js';
import { log } from '../log.js';
import { argsDigest, principalRefOf, type Outcome } from './audit.js';
import { watchCall } from '../actions/breakers/failures.js';
import { actorOf, principalKey } from './auth.js';
import { askConfirmation, authorize, shapedErrorCode, validArgs } from './call-checks.js';
import type { McpContext } from './context.js';
import { errorResult, okResult } from './results.js';
import { createdTask } from './tasks/index.js';
import type { AnyTool, Progress, ToolContext } from './tool.js';
import { toolFor } from './views/visible-tools.js';
import { type Caller } from '../events/principals.js';

/**
 * One tools/call, in order: who is calling (re-checked per call), is the tool there for them, is it in
 * the agent's scope (and may a quarantined agent call it), path policy, strict validation, confirmation
 * for destructive tools, then the handler. Whatever happens, exactly one audit row is recorded
 * (callTool, call.ts, waits for it to be written before it answers).
 */
export const IDEMPOTENCY_META_KEY = 'colony/idempotency_key';

export interface CallRequest {
  name: string;
  rawArgs: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
  progress: Progress;
  /** The request accepts an MCP task instead of the result: a long tool then answers with one. */
  acceptsTask: boolean;
}

export async function runCall(
  ctx: McpContext,
  caller: Caller | null,
  call: CallRequest,
): Promise<CallToolResult | CreateTaskResultV2> {
  const tool = caller ? toolFor(ctx, caller, call.name) : undefined;
  const audit = callAudit(ctx, caller, call, tool);
  if (!caller)
    return audit.refuse('blocked', new DomainError('ErrUnauthorized', 'the token is missing, unknown or revoked'));
  if (!tool)
    return audit.refuse(
      'blocked',
      new DomainError('ErrToolNotFound', `no tool named ${call.name}`, { tool: call.name }),
    );
  const denied = authorize(caller, tool);
  if (denied) return audit.refuse('blocked', denied);
  try {
    const { args, confirmation } = validArgs(ctx, tool, call.rawArgs);
    const digest = (audit.row.digest = argsDigest(args));
    if (tool.trust === 'destructive') {
      if (confirmation === undefined)
        return audit.finish('pending_confirmation', askConfirmation(ctx, caller, tool, args, digest), null);
      try {
        ctx.confirmations.redeem(confirmation, tool.name, digest, principalKey(caller));
      } catch (e) {
        return audit.refuse('blocked', e);
      }
    }
    const toolCtx = toolContext(ctx, caller, tool, call, audit.row);
    let value: unknown;
    if (call.acceptsTask && tool.task) {
      // The work is started and committed; the task is its record in the log (src/mcp/tasks). One audit row, as for any call.
      const begun = await tool.task(toolCtx, args);
      if ('task' in begun) return audit.finish('success', createdTask(ctx, caller, begun.task), null);
      value = begun.now;
    } else {
      // A handler's effects before its COMMIT are in the database (its audit row, the confirmation and the
      // breaker's watch are this pipeline's, outside it): on a PostgreSQL node it may run again if its batch
      // lost a race to another node (engine/group-commit.ts). On SQLite nothing races: it runs in callTool's batch.
      const handle = () => tool.handler(toolCtx, args);
      const retryable = tool.trust !== 'read' && ctx.app.engine.replica !== null;
      value = await (retryable ? ctx.app.engine.group.run(handle, { retry: true }) : handle());
    }
    const shaped = shapedErrorCode(value);
    return audit.finish(shaped ? 'error' : 'success', okResult(tool, value), shaped);
  } catch (e) {
    const refused = audit.refuse('error', e);
    // A COMMIT that failed under the handler (awaited there, see above) is answered by callTool, as before.
    if (e instanceof CommitFailedError) throw e;
    return refused;
  }
}

/** What the audit row will say, filled in as the call learns it. */
interface AuditFacts {
  /** A keyed call's command id is only known once its arguments are (its scope + their digest); until then a fresh one. */
  commandId: string;
  /** Of the validated arguments once they exist, else of what was sent. */
  digest?: string;
}

/** The one audit row a call records, whatever its outcome, and the log line of a write call. */
function callAudit(ctx: McpContext, caller: Caller | null, call: CallRequest, tool: AnyTool | undefined) {
  const started = process.hrtime.bigint();
  const row: AuditFacts = { commandId: newCommandId() };
  const finish = <R>(outcome: Outcome, result: R, code: string | null): R => {
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    const principal = caller ? actorOf(caller) : 'anonymous';
    const at = ctx.app.engine.clock().toISOString();
    const digest = row.digest ?? argsDigest(call.rawArgs);
    ctx.audit.record({
      at,
      principal,
      ...principalRefOf(caller),
      tool: call.name,
      argsDigest: digest,
      outcome,
      errorCode: code,
      durationMs,
      commandId: row.commandId,
    });
    // The repeated-failure breaker's streaks (actions/breakers/failures.ts): an agent's calls of a known tool.
    if (caller?.kind === 'agent' && tool)
      watchSafely(ctx, caller.agentId, {
        tool: tool.name,
        argsDigest: digest,
        outcome,
        errorCode: code,
        at,
        goalArg: call.rawArgs.goal_id,
      });
    // Writes only (reads would drown them), and only a known tool: an unknown name is the caller's text. Never the arguments.
    if (ctx.logCalls && tool && tool.trust !== 'read') {
      const ms = Math.round(durationMs * 10) / 10;
      log.info(
        { principal, principalId: principalRefOf(caller).principalId, tool: tool.name, outcome, code, ms },
        'tool call',
      );
    }
    return result;
  };
  const refuse = (outcome: Outcome, e: unknown) => {
    const { result, code } = errorResult(tool, e);
    return finish(outcome, result, code);
  };
  return { row, finish, refuse };
}

function watchSafely(ctx: McpContext, agentId: number, call: Parameters<typeof watchCall>[2]): void {
  try {
    watchCall(ctx.app, agentId, call);
  } catch (err) {
    log.warn({ err, agentId, tool: call.tool }, 'the repeated-failure breaker could not record a call');
  }
}

/** What the handler gets: the command its writes carry (keyed by the idempotency key when the call has one). */
function toolContext(ctx: McpContext, caller: Caller, tool: AnyTool, call: CallRequest, row: AuditFacts): ToolContext {
  const key = call.meta?.[IDEMPOTENCY_META_KEY];
  const scope = typeof key === 'string' ? idempotencyScope(caller, tool.name, key) : undefined;
  if (scope !== undefined) row.commandId = `${scope}${row.digest}`;
  const command = {
    actor: actorOf(caller),
    commandId: row.commandId,
    record: scope !== undefined,
    correlationId: row.commandId,
    idempotencyScope: scope,
  };
  return {
    app: ctx.app,
    caller,
    tools: ctx.tools,
    command,
    runtime: ctx.runtime,
    node: ctx.node,
    cwd: ctx.cwd,
    progress: call.progress,
  };
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
