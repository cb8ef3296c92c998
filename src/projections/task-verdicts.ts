import type { TaskVerified } from '../events/tasks.js';
import { sqlFor, type TableNames } from '../engine/projection.js';
import { run, type Steps } from '../engine/projection-sql.js';
import { reserve } from './tasks-goal-totals.js';

type T = 'tasks' | 'goal_totals';

/** The tasks projection's verdicts (projections/tasks.ts routes TaskVerified here). */
const sql = sqlFor((t: TableNames<T>) => ({
  verified: `UPDATE "${t.tasks}" SET status = ?, verdict = ?, verified_by = ?, failure_reason = ?, verifier_output = ?, completed_at = ?,
    rejections = rejections + ?, rejection_limit = ?, updated_at = ? WHERE task_id = ?`,
  returned: `UPDATE "${t.tasks}" SET status = 'claimed', verdict = 'reject', verified_by = ?, failure_reason = ?, verifier_output = ?,
    lease_expires_at = ?, reserved_tokens = ?, reserved_cents = ?, rejections = rejections + 1, rejection_limit = ?, updated_at = ?
    WHERE task_id = ?`,
}));

/**
 * A verdict: done or failed (its time is the task's completion), or — a rejection within the goal's retry
 * limit — claimed again by its assignee under the returned lease and reservation. The rejection count is of
 * the current attempt; the limit is the goal's when the rejection was recorded (null before the loop existed).
 */
export function* verified(t: TableNames<T>, d: TaskVerified['data'], at: string): Steps {
  const q = sql(t);
  const by = `${d.verifierKind}:${d.verifier.name}`;
  const limit = d.rejections?.limit ?? null;
  if (d.returned) {
    const { tokens, cents } = d.returned.reservation;
    yield* reserve(t, d.taskId, tokens, cents, at);
    yield run(q.returned, by, d.reason, d.output, d.returned.leaseExpiresAt, tokens, cents, limit, at, d.taskId);
    return;
  }
  const rejected = d.verdict === 'reject' ? 1 : 0;
  yield run(q.verified, d.to, d.verdict, by, rejected ? d.reason : null, d.output, at, rejected, limit, at, d.taskId);
}
