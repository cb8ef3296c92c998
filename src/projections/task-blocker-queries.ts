import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { all, applySteps, type Steps } from '../engine/projection-sql.js';
import type { TaskStatus } from '../events/task-status.js';
import { readOwnerOfTask, readTask, type TaskRow } from './task-queries.js';

/**
 * Reads over the tasks projection's dependencies (task-blockers.ts): a task's blockers with their statuses,
 * the graph of a goal's (or a project's) tasks for the cycle check, the tasks a caller names as blockers,
 * and who waits on a task. Written as steps where a unit of work reads them (either store).
 */
export interface BlockerStatus {
  taskId: number;
  title: string;
  status: TaskStatus;
}

/** The task's blockers with their statuses now, in the order given. */
export function* readBlockersOf(task: Pick<TaskRow, 'blockedBy'>): Steps<BlockerStatus[]> {
  if (task.blockedBy.length === 0) return [];
  const rows = yield* all<BlockerStatus>(
    `SELECT task_id AS taskId, title, status FROM tasks WHERE task_id IN (${task.blockedBy.map(() => '?').join(', ')})`,
    ...task.blockedBy,
  );
  return task.blockedBy.flatMap((id) => rows.filter((r) => r.taskId === id));
}
export const blockersOf = (db: Database, task: Pick<TaskRow, 'blockedBy'>): BlockerStatus[] =>
  applySteps(db, readBlockersOf(task));

/** Each task of the goal (or, for a project task, of the project) that waits on others, to its blockers. */
export function* readDependencyGraph(scope: {
  goalId: number | null;
  projectId: number | null;
}): Steps<Map<number, number[]>> {
  const edges = yield* all<{ taskId: number; blockerId: number }>(
    `SELECT b.task_id AS taskId, b.blocker_id AS blockerId FROM task_blockers b JOIN tasks t ON t.task_id = b.task_id
    WHERE ${scope.goalId !== null ? 't.goal_id = ?' : 't.goal_id IS NULL AND t.project_id = ?'}`,
    scope.goalId ?? scope.projectId,
  );
  const graph = new Map<number, number[]>();
  for (const e of edges) graph.set(e.taskId, [...(graph.get(e.taskId) ?? []), e.blockerId]);
  return graph;
}

/** The tasks named as blockers that are the tenant's, with what the rules need (a missing one is none of its). */
export function* readBlockerFacts(tenant: number, ids: readonly number[]) {
  const found = [];
  for (const id of new Set(ids)) {
    const t = yield* readTask(id);
    if (!t || (yield* readOwnerOfTask(t)) !== tenant) continue;
    found.push({ taskId: t.taskId, title: t.title, status: t.status, goalId: t.goalId, projectId: t.projectId });
  }
  return found;
}

/** The tasks waiting on `blockerId`. */
export const dependentsOf = (db: Database, blockerId: number): number[] =>
  (
    prepared(db, 'SELECT task_id FROM task_blockers WHERE blocker_id = ? ORDER BY task_id').all(blockerId) as {
      task_id: number;
    }[]
  ).map((r) => r.task_id);
