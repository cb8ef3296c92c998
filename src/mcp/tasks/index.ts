import type { CreateTaskResultV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import { ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { CurrentCaller } from '../auth.js';
import type { McpContext } from '../context.js';
import { parseTaskId, taskIdOf, type TaskRef } from './ids.js';
import { cancelRunTask, runState, visibleRun } from './runs.js';
import { verificationState, visibleVerification } from './verifications.js';
import { created, detailed, requireTasks, taskNotFound, TASKS_EXTENSION, type TaskState } from './wire.js';
import { type Caller } from '../../events/principals.js';

/**
 * The tasks extension on one 2026-07-28 server (SEP-2663): `tasks/get`, `tasks/update` and `tasks/cancel`,
 * and the CreateTaskResult of a call that became a task (call-pipeline.ts). Nothing is kept in memory: an id names
 * a record in the log (ids.ts) and every request reads it again, checking who asks (runs.ts,
 * verifications.ts) — so any Colony process on the store answers, before and after a restart. Reads
 * write no audit row; a cancel is an event in the log, recorded with its actor.
 */
export { declaresTasks, TASKS_EXTENSION } from './wire.js';

/** The capability a 2026-07-28 server advertises (server/discover): an empty object, no settings. */
export const tasksCapability = { extensions: { [TASKS_EXTENSION]: {} } };

/** A task a caller may see, as it is now, with the cancel that applies to it. */
interface Found {
  state: TaskState;
  cancel(): void;
}

function find(ctx: McpContext, caller: Caller, ref: TaskRef): Found | null {
  if (ref.kind === 'run') {
    const run = visibleRun(ctx, caller, ref.runId);
    return run && { state: runState(ctx, run), cancel: () => cancelRunTask(ctx, caller, run) };
  }
  const v = visibleVerification(ctx, caller, ref.taskId, ref.version);
  // A verdict is the owner's recipe's to give: cancelling the wait stops nothing (SEP-2663 makes
  // cancellation cooperative — acknowledged, not promised). The owner cancels the Colony task itself.
  return v && { state: verificationState(ctx, v), cancel: () => undefined };
}

/** The CreateTaskResult a task-augmented call answers, right after its record was committed. */
export function createdTask(ctx: McpContext, caller: Caller, ref: TaskRef): CreateTaskResultV2 {
  const found = find(ctx, caller, ref);
  if (!found)
    throw new Error(`the task record ${JSON.stringify(ref)} is not visible to the caller who just created it`);
  return created(detailed(taskIdOf(ctx.app, ref), found.state));
}

const TaskParams = z.looseObject({ taskId: z.string().max(200) });
/** What a handler is told of its request: its token (for the caller) and its 2026-07-28 envelope. */
type Ctx = Parameters<CurrentCaller>[0] & { mcpReq: { envelope?: object } };

export function registerTasks(server: Server, ctx: McpContext, currentCaller: CurrentCaller): void {
  /** Capability, caller, then the task — each refusal the SEP's error, and "not found" for whatever the caller may not see. */
  const lookup = (params: { taskId: string }, extra: Ctx): { taskId: string; found: Found } => {
    requireTasks(extra.mcpReq.envelope);
    const caller = currentCaller(extra);
    if (!caller) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'the token is unknown, expired or revoked');
    const ref = parseTaskId(ctx.app, params.taskId);
    const found = ref && find(ctx, caller, ref);
    if (!found) throw taskNotFound();
    return { taskId: params.taskId, found };
  };
  server.setRequestHandler('tasks/get', { params: TaskParams }, (params, extra) =>
    // Answered once what it read is on disk (a batch may be committed but still syncing: engine/wal-sync.ts).
    ctx.app.engine.group.read(() => {
      const { taskId, found } = lookup(params, extra);
      return detailed(taskId, found.state);
    }),
  );
  // No Colony task ever asks its client for input (none is input_required), so no key is outstanding:
  // every response is ignored, as SEP-2663 says of keys not outstanding, and the answer is the plain ack.
  server.setRequestHandler('tasks/update', { params: TaskParams }, (params, extra) => {
    requireTasks(extra.mcpReq.envelope);
    if (extra.mcpReq.inputResponses === undefined)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'tasks/update needs inputResponses');
    lookup(params, extra);
    return {};
  });
  server.setRequestHandler('tasks/cancel', { params: TaskParams }, (params, extra) => {
    lookup(params, extra).found.cancel();
    return {};
  });
}
