import type { Database } from 'better-sqlite3';
import { postSystemMessage } from '../actions/notifications.js';
import { projectChannelName } from '../actions/projects/tasks.js';
import type { WakeRequest } from '../actions/runs.js';
import type { App } from '../app.js';
import type { StoredEvent } from '../engine/event.js';
import type { WakeSource } from '../events/runs.js';
import type { TaskBlockersSet } from '../events/tasks.js';
import { getGoal } from '../projections/goal-queries.js';
import { getAgent } from '../projections/principal-queries.js';
import { getProject } from '../projections/projects.js';
import { blockersOf, dependentsOf } from '../projections/task-blocker-queries.js';
import { getTask, ownerOfTask, type TaskRow } from '../projections/task-queries.js';
import { projectAgentIds } from '../projections/wake-queries.js';
import { oneLine } from '../terminal.js';

/**
 * What task dependencies do to wake-ups (after commit, from the projections as they stand now):
 *
 * - a wake-up to work on a task that still waits on a blocker (task_assignment, task_timer, task_dispatched,
 *   children_done) waits: it is not asked for now, and task_unblocked stands in for it later;
 * - task_unblocked — the last blocker of a task becoming done (or a change of blockers that leaves none
 *   waiting) wakes whoever holds the task, else the goal's coordinator, else (a PENDING project task) the
 *   project's agent. Once: only the blocker that finished last — by completion time, then id — wakes it;
 * - a blocker that was cancelled, failed or timed out will not be done: the tasks waiting on it keep
 *   waiting, and a system message in the goal's channel (a project's: its channel) tells the coordinator.
 */
const WAITING = new Set(['approved', 'claimed', 'in_progress']);
const HELD = new Set(['claimed', 'in_progress']);
const WONT_BE_DONE = new Set(['cancelled', 'failed', 'timeout']);
const DEFERRED = new Set<WakeSource>(['task_assignment', 'task_timer', 'task_dispatched', 'children_done']);

const blocked = (db: Database, task: TaskRow): boolean => blockersOf(db, task).some((b) => b.status !== 'done');

/** Whether a wake-up must wait for its task's blockers. */
export function waitsOnBlockers(db: Database, w: WakeRequest): boolean {
  if (!w.taskId || !DEFERRED.has(w.source)) return false;
  const task = getTask(db, w.taskId);
  return task !== null && blocked(db, task);
}

export function unblockWakes(db: Database, e: StoredEvent): WakeRequest[] {
  const d = e.data as Record<string, unknown>;
  if (e.type === 'TaskVerified' && d.to === 'done') {
    const blocker = d.taskId as number;
    return dependentsOf(db, blocker).flatMap((id) => unblocked(db, id, blocker));
  }
  if (e.type !== 'TaskBlockersSet') return [];
  const s = d as unknown as TaskBlockersSet['data'];
  const dropped = s.previous.filter((id) => !s.blockedBy.includes(id) && getTask(db, id)?.status !== 'done');
  return dropped.length > 0 ? unblocked(db, s.taskId, null) : [];
}

/** The wake-up of a task none of whose blockers waits any more; `finished`: the blocker just done (it must be the last). */
function unblocked(db: Database, taskId: number, finished: number | null): WakeRequest[] {
  const task = getTask(db, taskId);
  if (!task || !WAITING.has(task.status) || blocked(db, task)) return [];
  const blockers = task.blockedBy.map((id) => getTask(db, id)).filter((b): b is TaskRow => b !== null);
  const last = blockers.reduce<TaskRow | null>((a, b) => (a && later(a, b) ? a : b), null);
  if (finished !== null && last?.taskId !== finished) return [];
  const to = wakeTarget(db, task);
  if (!to) return [];
  const prompt = unblockedPrompt(task, blockers, to.holds);
  return [{ agentId: to.agentId, source: 'task_unblocked', taskId, by: 'system', prompt }];
}

const later = (a: TaskRow, b: TaskRow): boolean =>
  (a.completedAt ?? '') > (b.completedAt ?? '') ||
  ((a.completedAt ?? '') === (b.completedAt ?? '') && a.taskId > b.taskId);

function wakeTarget(db: Database, task: TaskRow): { agentId: number; holds: boolean } | null {
  if (HELD.has(task.status) && task.assigneeAgentId !== null) return { agentId: task.assigneeAgentId, holds: true };
  if (task.goalId !== null) {
    const goal = getGoal(db, task.goalId);
    return goal ? { agentId: goal.coordinatorAgentId, holds: false } : null;
  }
  const owner = ownerOfTask(db, task);
  if (task.projectId === null || owner === null) return null;
  const agentId = projectAgentIds(db, owner, task.projectId).find((id) => getAgent(db, id)?.runnable);
  return agentId === undefined ? null : { agentId, holds: false };
}

function unblockedPrompt(task: TaskRow, blockers: readonly TaskRow[], holds: boolean): string {
  const id = task.taskId;
  const claim = `claim_task ${JSON.stringify({ task_id: id })}`;
  return [
    `Task #${id} ${JSON.stringify(oneLine(task.title))} is unblocked: every task it waited on is done.`,
    ...blockers.map((b) => `- #${b.taskId} ${JSON.stringify(oneLine(b.title))}: done`),
    '',
    holds
      ? `You hold task #${id}: do the work now and hand it in with complete_task (${claim} renews your lease if it ran out).`
      : `Nobody holds task #${id}: take it with ${claim} and do it — or, coordinating, tell the agent who should (send_message).`,
  ].join('\n');
}

/** A blocker that will not be done (cancelled, failed, timed out): its waiting tasks' coordinator is told. */
export function noticeClosedBlocker(app: App, e: StoredEvent): void {
  const d = e.data as Record<string, unknown>;
  const closed =
    e.type === 'TaskCancelled' || e.type === 'TaskTimedOut' || (e.type === 'TaskVerified' && d.to === 'failed');
  if (!closed) return;
  const db = app.engine.db;
  const blocker = getTask(db, d.taskId as number);
  const waiting = dependentsOf(db, d.taskId as number)
    .map((id) => getTask(db, id))
    .filter((t): t is TaskRow => t !== null && (WAITING.has(t.status) || t.status === 'proposed'));
  const owner = blocker && ownerOfTask(db, blocker);
  // Retried meanwhile (task_dispatch): it may be done yet, nothing to tell.
  if (!blocker || owner === null || waiting.length === 0 || !WONT_BE_DONE.has(blocker.status)) return;
  const goal = blocker.goalId === null ? null : getGoal(db, blocker.goalId);
  const project = blocker.projectId === null ? null : getProject(db, blocker.projectId);
  const channel = goal ? `goal-${goal.slug}` : project ? projectChannelName(project) : null;
  if (!channel) return;
  const coordinator = goal ? getAgent(db, goal.coordinatorAgentId)?.name : undefined;
  const names = waiting.map((t) => `#${t.taskId} ${JSON.stringify(oneLine(t.title))}`).join(', ');
  const retry = blocker.status === 'cancelled' ? '' : `#${blocker.taskId} is retried (task_dispatch) or `;
  const many = waiting.length > 1;
  const body = `${coordinator ? `@${coordinator} ` : ''}Task #${blocker.taskId} ${JSON.stringify(oneLine(blocker.title))} is ${blocker.status}, and ${names} ${many ? 'wait' : 'waits'} on it: ${many ? 'they' : 'it'} cannot be claimed until ${retry}${many ? 'their' : 'its'} blockers change (set_task_blockers).`;
  const metadata = {
    event: 'BlockerClosed',
    goal_id: blocker.goalId,
    task_id: blocker.taskId,
    status: blocker.status,
    waiting_task_ids: waiting.map((t) => t.taskId),
  };
  postSystemMessage(app, owner, channel, body, metadata, { actor: 'system' });
}
