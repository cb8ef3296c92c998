import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';

/**
 * Reads for "done only with evidence" over the tasks and goals projections: whether a task is a leaf, a
 * goal's leaves not yet done by a verdict that counts (complete_goal's fact), and what waits on the owner —
 * leaves handed in with no verifier but the owner, and tasks failed at their goal's retry limit.
 */
export const hasChildren = (db: Database, taskId: number): boolean =>
  prepared(db, 'SELECT 1 FROM tasks WHERE parent_id = ? LIMIT 1').get(taskId) !== undefined;

/** complete_goal's fact (commands/goal-evidence.ts has the same shape). */
export interface UnverifiedLeaves {
  count: number;
  first: { taskId: number; status: string }[];
}

const LEAF = 'NOT EXISTS (SELECT 1 FROM tasks c WHERE c.parent_id = t.task_id)';

/** A goal's leaf tasks that are neither done nor cancelled: how many, and the first `listed` by id. */
export function unverifiedLeaves(db: Database, goalId: number, listed = 10): UnverifiedLeaves {
  const where = `t.goal_id = ? AND t.status NOT IN ('done', 'cancelled') AND ${LEAF}`;
  const count = (prepared(db, `SELECT count(*) AS n FROM tasks t WHERE ${where}`).get(goalId) as { n: number }).n;
  if (count === 0) return { count, first: [] };
  const first = prepared(
    db,
    `SELECT t.task_id AS taskId, t.status FROM tasks t WHERE ${where} ORDER BY t.task_id LIMIT ?`,
  ).all(goalId, listed) as UnverifiedLeaves['first'];
  return { count, first };
}

export interface TaskNeedingOwner {
  /** `verdict`: a leaf awaits the owner's verdict; `rejected`: it failed at the goal's retry limit. */
  kind: 'verdict' | 'rejected';
  taskId: number;
  title: string;
  goalId: number;
  goalTitle: string;
  assigneeName: string | null;
  summary: string | null;
  /** The last verdict's reason and who gave it (`rejected`). */
  reason: string | null;
  verifiedBy: string | null;
  rejections: number;
  rejectionLimit: number | null;
  at: string;
}

const OPEN_GOAL = `g.status NOT IN ('completed', 'cancelled')`;
const COLUMNS = `t.task_id AS taskId, t.title, g.goal_id AS goalId, g.title AS goalTitle, t.assignee_name AS assigneeName,
  t.summary, t.failure_reason AS reason, t.verified_by AS verifiedBy, t.rejections, t.rejection_limit AS rejectionLimit, t.updated_at AS at`;

/**
 * Leaves of the owner's open goals that require evidence, handed in with no verifier but the owner (auto),
 * and tasks failed at their goal's retry limit; newest first, at most `limit` of each.
 */
export function tasksNeedingOwner(db: Database, ownerId: number, limit: number): TaskNeedingOwner[] {
  const verdicts = prepared(
    db,
    `SELECT 'verdict' AS kind, ${COLUMNS} FROM goals g JOIN tasks t ON t.goal_id = g.goal_id
      WHERE g.owner_id = ? AND g.require_evidence = 1 AND ${OPEN_GOAL} AND t.status = 'awaiting_verification'
        AND t.verifier_kind = 'auto' AND ${LEAF} ORDER BY t.updated_at DESC, t.task_id DESC LIMIT ?`,
  ).all(ownerId, limit) as TaskNeedingOwner[];
  const rejected = prepared(
    db,
    `SELECT 'rejected' AS kind, ${COLUMNS} FROM goals g JOIN tasks t ON t.goal_id = g.goal_id
      WHERE g.owner_id = ? AND ${OPEN_GOAL} AND t.status = 'failed' AND t.verdict = 'reject'
        AND t.rejection_limit IS NOT NULL AND t.rejections > t.rejection_limit ORDER BY t.updated_at DESC, t.task_id DESC LIMIT ?`,
  ).all(ownerId, limit) as TaskNeedingOwner[];
  return [...verdicts, ...rejected];
}

/** How many tasks wait on the owner (both kinds), however many the list shows. */
export const tasksNeedingOwnerCount = (db: Database, ownerId: number): number =>
  (
    prepared(
      db,
      `SELECT count(*) AS n FROM goals g JOIN tasks t ON t.goal_id = g.goal_id WHERE g.owner_id = ? AND ${OPEN_GOAL} AND (
        (g.require_evidence = 1 AND t.status = 'awaiting_verification' AND t.verifier_kind = 'auto' AND ${LEAF})
        OR (t.status = 'failed' AND t.verdict = 'reject' AND t.rejection_limit IS NOT NULL AND t.rejections > t.rejection_limit))`,
    ).get(ownerId) as { n: number }
  ).n;
