import { sqlFor, type TableNames } from '../engine/projection.js';
import { run, type Steps } from '../engine/projection-sql.js';

/**
 * The tasks projection's dependencies (its DDL is in tasks.ts): each task's blockers in the order given, as
 * `tasks.blocked_by` (JSON, read with the task) and as rows of `task_blockers`, the edges that the claim's
 * wait, the cycle check over a goal's graph and the unblock wake-up (who waits on a task) read by index.
 */
type T = 'tasks' | 'task_blockers';

export const taskBlockersDdl = (t: TableNames<T>): string => `
  CREATE TABLE IF NOT EXISTS "${t.task_blockers}" (
    task_id INTEGER NOT NULL, blocker_id INTEGER NOT NULL, PRIMARY KEY (task_id, blocker_id));
  CREATE INDEX IF NOT EXISTS "${t.task_blockers}_by_blocker" ON "${t.task_blockers}" (blocker_id);`;

const sql = sqlFor((t: Record<T, string>) => ({
  column: `UPDATE "${t.tasks}" SET blocked_by = ?, updated_at = coalesce(?, updated_at) WHERE task_id = ?`,
  clear: `DELETE FROM "${t.task_blockers}" WHERE task_id = ?`,
  edge: `INSERT OR IGNORE INTO "${t.task_blockers}" (task_id, blocker_id) VALUES (?, ?)`,
}));

/** The task's blockers are now exactly `blockedBy` ([]: none); `at`: when they changed (null: as the task was created). */
export function* setTaskBlockers(
  t: TableNames<T>,
  taskId: number,
  blockedBy: readonly number[],
  at: string | null = null,
): Steps {
  const q = sql(t);
  yield run(q.column, blockedBy.length > 0 ? JSON.stringify(blockedBy) : null, at, taskId);
  yield run(q.clear, taskId);
  for (const id of blockedBy) yield run(q.edge, taskId, id);
}
