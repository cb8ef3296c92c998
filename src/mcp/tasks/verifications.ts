import type { App } from '../../app.js';
import type { StoredEvent } from '../../engine/event.js';
import { readStream } from '../../engine/store.js';
import { taskStream, type TaskCompleted, type TaskCancelled, type TaskVerified } from '../../events/tasks.js';
import { getTask, ownerOfTask, type TaskRow } from '../../projections/task-queries.js';
import type { McpContext } from '../context.js';
import { tenantOf } from '../resources/access.js';
import { mayReadRunsOf, readableRuns } from '../views/readable.js';
import { okResult } from '../results.js';
import type { TaskState } from './wire.js';
import { type Caller } from '../../events/principals.js';

/**
 * complete_task as a task, for a task whose verifier is a command: the MCP task is one hand-in — the
 * TaskCompleted event at version v of `task-<id>` — and it is working until the next decision on that
 * stream: the verdict (TaskVerified: completed, with the Colony task's new status and the command's
 * exit code and output tail), or the owner cancelling the Colony task (cancelled). All read from the
 * log, so the runtime that runs the command may be another process, and may restart in between.
 */
export interface Verification {
  task: TaskRow;
  completion: StoredEvent;
  decision: StoredEvent | undefined;
}

/** The version of the task's latest hand-in, right after complete_task recorded it. */
export function lastCompletion(app: App, taskId: number): number | null {
  return readStream(app.engine.db, taskStream(taskId)).findLast((e) => e.type === 'TaskCompleted')?.version ?? null;
}

/**
 * The hand-in behind a task, if the caller may see it: its tenant's task, handed in by the caller or
 * by an agent whose runs it may read (`readableBy`, as for runs: the owner sees the team's).
 */
export function visibleVerification(
  ctx: McpContext,
  caller: Caller,
  taskId: number,
  version: number,
): Verification | null {
  const db = ctx.app.engine.db;
  const task = getTask(db, taskId);
  if (!task || ownerOfTask(db, task) !== tenantOf(caller)) return null;
  const [completion, ...after] = readStream(db, taskStream(taskId), { from: version });
  if (completion?.type !== 'TaskCompleted' || completion.version !== version) return null;
  if (!mayReadRunsOf(readableRuns(ctx, caller), (completion.data as TaskCompleted['data']).agentId)) return null;
  return { task, completion, decision: after.find((e) => e.type === 'TaskVerified' || e.type === 'TaskCancelled') };
}

export function verificationState(ctx: McpContext, v: Verification): TaskState {
  const what = `task ${v.task.taskId} "${v.task.title}"`;
  const times = {
    createdAt: v.completion.recordedAt,
    lastUpdatedAt: v.decision?.recordedAt ?? v.completion.recordedAt,
  };
  if (!v.decision) {
    const recipe = v.task.verifier.kind === 'command' && v.task.verifier.recipe ? ` (${v.task.verifier.recipe})` : '';
    return { status: 'working', statusMessage: `${what} awaits its command verifier${recipe}`, ...times };
  }
  if (v.decision.type === 'TaskCancelled') {
    const d = v.decision.data as TaskCancelled['data'];
    return { status: 'cancelled', statusMessage: `${what} was cancelled by ${d.by.name}: ${d.reason}`, ...times };
  }
  const d = v.decision.data as TaskVerified['data'];
  // complete_task's own answer, with the verdict it waited for (its output schema has these fields).
  const value = {
    task_id: v.task.taskId,
    status: d.to,
    verdict: d.verdict,
    reason: d.reason,
    exit_code: d.exitCode,
    output: d.output,
  };
  return {
    status: 'completed',
    statusMessage: `${what}: ${d.verdict} → ${d.to} (${d.reason})`,
    result: okResult(ctx.tools.get('complete_task')!, value),
    ...times,
  };
}
