import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { TaskStatus } from '../events/task-status.js';
import { getTask, type TaskRow } from './task-queries.js';

/**
 * xylocopa's task reads (task_list, task_counts) over Colony's one task table: every task of a tenant —
 * project tasks and goal tasks alike (a goal task recorded before tasks had an owner belongs to its goal's
 * owner) — with its project's name. Statuses are Colony's; tools show them in xylocopa's vocabulary.
 */
const OWNED = `(t.owner_id = @owner OR (t.owner_id IS NULL AND EXISTS (SELECT 1 FROM goals g WHERE g.goal_id = t.goal_id AND g.owner_id = @owner)))`;

export interface TaskListRow {
  task: TaskRow;
  projectName: string | null;
}

export function listTenantTasks(
  db: Database,
  f: { ownerId: number; projectId: number | null; statuses: readonly TaskStatus[] | null; limit: number },
): TaskListRow[] {
  const statusFilter =
    f.statuses === null ? '' : `AND t.status IN (${f.statuses.map((_, i) => `@s${i}`).join(', ') || 'NULL'})`;
  const params: Record<string, unknown> = { owner: f.ownerId, project: f.projectId, limit: f.limit };
  f.statuses?.forEach((s, i) => {
    params[`s${i}`] = s;
  });
  const rows = prepared(
    db,
    `SELECT t.task_id AS id, p.name AS projectName FROM tasks t LEFT JOIN projects p ON p.project_id = t.project_id
    WHERE ${OWNED} AND (@project IS NULL OR t.project_id = @project) ${statusFilter} ORDER BY t.created_at DESC, t.task_id DESC LIMIT @limit`,
  ).all(params) as { id: number; projectName: string | null }[];
  return rows.map((r) => ({ task: getTask(db, r.id)!, projectName: r.projectName }));
}

export function countTenantTasks(
  db: Database,
  ownerId: number,
  projectId: number | null,
): { status: TaskStatus; count: number }[] {
  return prepared(
    db,
    `SELECT t.status, count(*) AS count FROM tasks t WHERE ${OWNED} AND (@project IS NULL OR t.project_id = @project) GROUP BY t.status`,
  ).all({ owner: ownerId, project: projectId }) as { status: TaskStatus; count: number }[];
}
