import { sqlFor, type TableNames } from '../engine/projection.js';
import { run, get, type Steps } from '../engine/projection-sql.js';

/**
 * The tasks projection's `goal_totals` table (its DDL is in tasks.ts): per goal, the task count, the
 * spend, the open reservations and the last activity, kept in step with the task rows so that listing
 * goals never scans their tasks. A project task outside any goal counts in no goal's totals.
 */
type T = 'tasks' | 'goal_totals';

const sql = sqlFor((t: Record<T, string>) => ({
  counted: `INSERT INTO "${t.goal_totals}" (goal_id, task_count, last_activity_at) VALUES (?, 1, ?)
    ON CONFLICT(goal_id) DO UPDATE SET task_count = "${t.goal_totals}".task_count + 1, last_activity_at = excluded.last_activity_at`,
  reserved: `SELECT goal_id, reserved_tokens, reserved_cents FROM "${t.tasks}" WHERE task_id = ?`,
  consume: `UPDATE "${t.tasks}" SET reserved_tokens = ?, reserved_cents = ? WHERE task_id = ?`,
  totals: `UPDATE "${t.goal_totals}" SET spent_tokens = spent_tokens + ?, spent_cents = spent_cents + ?, reserved_tokens = reserved_tokens + ?,
    reserved_cents = reserved_cents + ?, last_activity_at = ? WHERE goal_id = ?`,
}));

/** A new task of the goal. */
export function* countTask(t: TableNames<T>, goalId: number, at: string): Steps {
  yield run(sql(t).counted, goalId, at);
}

/** Spend recorded on a task of the goal. */
export function* addSpend(t: TableNames<T>, goalId: number, tokens: number, cents: number, at: string): Steps {
  yield run(sql(t).totals, tokens, cents, 0, 0, at, goalId);
}

/**
 * Moves a task's open reservation to the new amounts, keeping the goal's sum in step. Call it before the
 * task row changes: it reads the reservation the row holds now.
 */
export function* reserve(t: TableNames<T>, taskId: number, tokens: number, cents: number, at: string): Steps {
  const q = sql(t);
  const row = yield* get<{ goal_id: number | null; reserved_tokens: number; reserved_cents: number }>(
    q.reserved,
    taskId,
  );
  if (!row || row.goal_id === null) return;
  yield run(q.totals, 0, 0, tokens - row.reserved_tokens, cents - row.reserved_cents, at, row.goal_id);
}

/**
 * Spend on a task consumes its open reservation: what was held for the work is now spent, so it is not
 * counted twice (held and spent) against the budgets while the work goes on.
 */
export function* consumeReservation(
  t: TableNames<T>,
  taskId: number,
  tokens: number,
  cents: number,
  at: string,
): Steps {
  const row = yield* get<{ goal_id: number | null; reserved_tokens: number; reserved_cents: number }>(
    sql(t).reserved,
    taskId,
  );
  if (!row || (row.reserved_tokens === 0 && row.reserved_cents === 0)) return;
  const left = { tokens: Math.max(row.reserved_tokens - tokens, 0), cents: Math.max(row.reserved_cents - cents, 0) };
  yield* reserve(t, taskId, left.tokens, left.cents, at);
  yield run(sql(t).consume, left.tokens, left.cents, taskId);
}
