import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { sqlFor, type TableNames } from '../engine/projection.js';

/**
 * The tasks projection's `goal_totals` table (its DDL is in tasks.ts): per goal, the task count, the
 * spend, the open reservations and the last activity, kept in step with the task rows so that listing
 * goals never scans their tasks. A project task outside any goal counts in no goal's totals.
 */
type T = 'tasks' | 'goal_totals';

const sql = sqlFor((t: Record<T, string>) => ({
  counted: `INSERT INTO "${t.goal_totals}" (goal_id, task_count, last_activity_at) VALUES (?, 1, ?)
    ON CONFLICT(goal_id) DO UPDATE SET task_count = task_count + 1, last_activity_at = excluded.last_activity_at`,
  reserved: `SELECT goal_id, reserved_tokens, reserved_cents FROM "${t.tasks}" WHERE task_id = ?`,
  totals: `UPDATE "${t.goal_totals}" SET spent_tokens = spent_tokens + ?, spent_cents = spent_cents + ?, reserved_tokens = reserved_tokens + ?,
    reserved_cents = reserved_cents + ?, last_activity_at = ? WHERE goal_id = ?`,
}));

/** A new task of the goal. */
export function countTask(db: Database, t: TableNames<T>, goalId: number, at: string): void {
  prepared(db, sql(t).counted).run(goalId, at);
}

/** Spend recorded on a task of the goal. */
export function addSpend(
  db: Database,
  t: TableNames<T>,
  goalId: number,
  tokens: number,
  cents: number,
  at: string,
): void {
  prepared(db, sql(t).totals).run(tokens, cents, 0, 0, at, goalId);
}

/**
 * Moves a task's open reservation to the new amounts, keeping the goal's sum in step. Call it before the
 * task row changes: it reads the reservation the row holds now.
 */
export function reserve(
  db: Database,
  t: TableNames<T>,
  taskId: number,
  tokens: number,
  cents: number,
  at: string,
): void {
  const q = sql(t);
  const row = prepared(db, q.reserved).get(taskId) as
    { goal_id: number | null; reserved_tokens: number; reserved_cents: number } | undefined;
  if (!row || row.goal_id === null) return;
  prepared(db, q.totals).run(0, 0, tokens - row.reserved_tokens, cents - row.reserved_cents, at, row.goal_id);
}
