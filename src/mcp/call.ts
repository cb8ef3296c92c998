import type { CreateTaskResultV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { DomainError } from '../errors.js';
import { log } from '../log.js';
import { CommitFailedError } from '../engine/group-batch.js';
import { SyncFailedError } from '../engine/wal-sync.js';
import { argsDigest, principalRefOf } from './audit.js';
import { actorOf } from './auth.js';
import { runCall } from './call-pipeline.js';
import type { McpContext } from './context.js';
import { errorResult } from './results.js';
import { noProgress, type Progress } from './tool.js';
import { type Caller } from '../events/principals.js';

/**
 * Every tools/call enters here and runs its pipeline (call-pipeline.ts). A call to a tool that is not a
 * read runs it inside group commit: its commands share one COMMIT with the calls that arrived beside it.
 * Every call answers only once its COMMIT (if any) is done and its audit row is written — so no answered
 * call lacks its row or its writes. A COMMIT that fails took the writes back: the call answers
 * ErrCommitFailed, and the audit trail gets a row saying so beside the one the handler's outcome left.
 */
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
  /** The request accepts an MCP task instead of the result (the 2026-07-28 tasks extension): a long tool then answers with one. */
  acceptsTask = false,
): Promise<CallToolResult | CreateTaskResultV2> {
  // A grouped caller: concurrent calls' commands share one COMMIT, and this call answers only after its own committed.
  // A read tool runs no command (and one that did would commit on its own): it skips the grouping's bookkeeping.
  const call = () => runCall(ctx, caller, { name, rawArgs, meta, progress, acceptsTask });
  const tool = ctx.tools.get(name);
  const group = ctx.app.engine.group;
  const answer = tool?.trust === 'read' ? group.read(call) : group.run(call);
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
    (e: unknown) => failedOutsideHandler(ctx, caller, name, rawArgs, e),
  );
}

/**
 * A call that failed outside its handler — most often a COMMIT that failed (an I/O error, a full disk)
 * and took the call's writes back: it answers as an error, never as done, and the trail says so beside
 * the row the handler's outcome left.
 */
async function failedOutsideHandler(
  ctx: McpContext,
  caller: Caller | null,
  name: string,
  rawArgs: Record<string, unknown>,
  e: unknown,
): Promise<CallToolResult> {
  const failed =
    e instanceof CommitFailedError
      ? new DomainError(
          'ErrCommitFailed',
          `the call's changes could not be written to disk and were rolled back: ${(e.cause as Error)?.message ?? e.message}`,
        )
      : e instanceof SyncFailedError
        ? new DomainError('ErrSyncFailed', `the call's ${e.message}`)
        : e;
  const { result, code } = errorResult(ctx.tools.get(name), failed);
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
}
