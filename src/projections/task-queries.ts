import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { all, applySteps, get, type Steps } from '../engine/projection-sql.js';
import type { AncestryNode, HeartbeatConfig, VerifierConfig } from '../events/tasks.js';
import type { TaskStatus } from '../events/task-status.js';
import { readGoal } from './goal-queries.js';

/**
 * Reads over the tasks projection (live names): one task, a goal's tasks, the sweeper's and the command
 * verifier's work lists, and rollups over a subtree — spend, and spend by billing code — summed by
 * recursive CTEs at read time, never stored.
 */
export interface TaskRow {
  /** goalId is null for a project task; ownerId is null for goal tasks recorded before project tasks existed (their goal's owner owns them). */
  taskId: number;
  goalId: number | null;
  ownerId: number | null;
  projectId: number | null;
  model: string | null;
  effort: string | null;
  priority: number;
  attempt: number;
  parentId: number | null;
  depth: number;
  ancestry: AncestryNode[];
  title: string;
  description: string;
  acceptanceCriteria: string;
  billingCode: string;
  budgetTokens: number | null;
  budgetCents: number | null;
  spentTokens: number;
  spentCents: number;
  reservedTokens: number;
  reservedCents: number;
  verifier: VerifierConfig;
  heartbeat: HeartbeatConfig | null;
  status: TaskStatus;
  assigneeAgentId: number | null;
  assigneeName: string | null;
  leaseExpiresAt: string | null;
  summary: string | null;
  artifactMessageIds: number[];
  verdict: string | null;
  verifiedBy: string | null;
  failureReason: string | null;
  verifierOutput: string | null;
  /** Rejected hand-ins of the current attempt, and the goal's retry limit at the last one (null: none, or before the loop). */
  rejections: number;
  rejectionLimit: number | null;
  createdBy: string;
  proposalId: number | null;
  createdAt: string;
  claimedAt: string | null;
  startedAt: string | null;
  submittedAt: string | null;
  completedAt: string | null;
  updatedAt: string;
  /** The tasks it waits on, in the order given ([]: none): claimable once each is done. */
  blockedBy: number[];
}
export interface Rollup {
  tokens: number;
  cents: number;
  taskCount: number;
}

const TASK = `SELECT task_id AS taskId, goal_id AS goalId, parent_id AS parentId, depth, ancestry, title, description,
  acceptance_criteria AS acceptanceCriteria, billing_code AS billingCode, budget_tokens AS budgetTokens, budget_cents AS budgetCents,
  spent_tokens AS spentTokens, spent_cents AS spentCents, reserved_tokens AS reservedTokens, reserved_cents AS reservedCents, verifier, heartbeat,
  status, assignee_agent_id AS assigneeAgentId, assignee_name AS assigneeName, lease_expires_at AS leaseExpiresAt, summary,
  artifact_message_ids AS artifactMessageIds, verdict, verified_by AS verifiedBy, failure_reason AS failureReason, verifier_output AS verifierOutput,
  rejections, rejection_limit AS rejectionLimit, created_by AS createdBy,
  proposal_id AS proposalId, created_at AS createdAt, claimed_at AS claimedAt, started_at AS startedAt, submitted_at AS submittedAt,
  completed_at AS completedAt, updated_at AS updatedAt, owner_id AS ownerId, project_id AS projectId, model, effort, priority, attempt,
  blocked_by AS blockedBy FROM tasks`;
function toTask(r: Record<string, unknown> | undefined): TaskRow | null {
  if (!r) return null;
  return {
    ...r,
    ancestry: JSON.parse(r.ancestry as string),
    verifier: JSON.parse(r.verifier as string),
    heartbeat: r.heartbeat ? JSON.parse(r.heartbeat as string) : null,
    artifactMessageIds: r.artifactMessageIds ? JSON.parse(r.artifactMessageIds as string) : [],
    blockedBy: r.blockedBy ? JSON.parse(r.blockedBy as string) : [],
  } as TaskRow;
}
// A query a unit of work yields (engine/unit-of-work.ts) is written once as steps (read*); the function of
// the same name answers it on SQLite for callers that are not units yet.
export function* readTask(taskId: number): Steps<TaskRow | null> {
  return toTask(yield* get(`${TASK} WHERE task_id = ?`, taskId));
}
export const getTask = (db: Database, taskId: number): TaskRow | null => applySteps(db, readTask(taskId));
/** The tenant a task belongs to: its own owner (project tasks, and tasks recorded since), else its goal's. */
export function* readOwnerOfTask(task: TaskRow): Steps<number | null> {
  return task.ownerId ?? (task.goalId === null ? null : ((yield* readGoal(task.goalId))?.ownerId ?? null));
}
export const ownerOfTask = (db: Database, task: TaskRow): number | null => applySteps(db, readOwnerOfTask(task));
/**
 * A goal's tasks (1,000 and more for a snapshot). Read as positional rows and named here: better-sqlite3's
 * row objects of this many columns cost twice as much to build (colony bench goal_snapshot_ms).
 * This statement is used only here, so its raw mode cannot surprise another caller of the cache.
 */
/** A goal's root tasks (one per approved tree), oldest first: an index of its own, whatever the goal's size. */
export function rootTasksOfGoal(
  db: Database,
  goalId: number,
): Pick<TaskRow, 'taskId' | 'budgetTokens' | 'budgetCents'>[] {
  return prepared(
    db,
    `SELECT task_id AS taskId, budget_tokens AS budgetTokens, budget_cents AS budgetCents FROM tasks
    WHERE goal_id = ? AND parent_id IS NULL ORDER BY task_id`,
  ).all(goalId) as Pick<TaskRow, 'taskId' | 'budgetTokens' | 'budgetCents'>[];
}

export function tasksOfGoal(db: Database, goalId: number): TaskRow[] {
  const stmt = prepared(db, `${TASK} WHERE goal_id = ? ORDER BY task_id`).raw(true);
  const names = stmt.columns().map((c) => c.name);
  return (stmt.all(goalId) as unknown[][]).map((values) => {
    const r: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) r[names[i]!] = values[i];
    return toTask(r)!;
  });
}

/** Tasks whose lease ran out by `now` while still held. */
export function* readExpiredLeases(now: string): Steps<number[]> {
  const rows = yield* all<{ task_id: number }>(
    `SELECT task_id FROM tasks WHERE lease_expires_at IS NOT NULL AND lease_expires_at <= ? AND status IN ('claimed', 'in_progress') ORDER BY task_id`,
    now,
  );
  return rows.map((r) => r.task_id);
}
export const expiredLeases = (db: Database, now: string): number[] => applySteps(db, readExpiredLeases(now));

/** Tasks waiting for a command verifier (after a crash, nobody may be running it). */
export const awaitingCommandVerification = (db: Database): TaskRow[] =>
  (
    prepared(
      db,
      `${TASK} WHERE verifier_kind = 'command' AND status = 'awaiting_verification' ORDER BY task_id`,
    ).all() as Record<string, unknown>[]
  ).map((r) => toTask(r)!);

const SUBTREE = `WITH RECURSIVE subtree(id) AS (SELECT task_id FROM tasks WHERE task_id = @root
  UNION ALL SELECT t.task_id FROM tasks t JOIN subtree s ON t.parent_id = s.id)`;

/** Spend of a task and all its descendants, and how many tasks that is. */
export function* readRollupSubtree(taskId: number): Steps<Rollup> {
  return (yield* get<Rollup>(
    `${SUBTREE} SELECT coalesce(sum(spent_tokens), 0) AS tokens, coalesce(sum(spent_cents), 0) AS cents, count(*) AS taskCount
    FROM tasks WHERE task_id IN (SELECT id FROM subtree)`,
    { root: taskId },
  ))!;
}
export const rollupSubtree = (db: Database, taskId: number): Rollup => applySteps(db, readRollupSubtree(taskId));

/** Spend of a subtree plus the reservations open inside it: what a budget on its root has committed. */
export function* readCommittedInSubtree(taskId: number): Steps<{ tokens: number; cents: number }> {
  return (yield* get<{ tokens: number; cents: number }>(
    `${SUBTREE} SELECT coalesce(sum(spent_tokens + reserved_tokens), 0) AS tokens, coalesce(sum(spent_cents + reserved_cents), 0) AS cents
    FROM tasks WHERE task_id IN (SELECT id FROM subtree)`,
    { root: taskId },
  ))!;
}
export const committedInSubtree = (db: Database, taskId: number): { tokens: number; cents: number } =>
  applySteps(db, readCommittedInSubtree(taskId));

/** Spend by billing code over a subtree, or over a whole goal's trees when `root` is null. */
export function rollupByBillingCode(
  db: Database,
  goalId: number,
  root: number | null,
): (Rollup & { billingCode: string })[] {
  const scope = root === null ? 'goal_id = @goal' : 'task_id IN (SELECT id FROM subtree)';
  return prepared(
    db,
    `${SUBTREE} SELECT billing_code AS billingCode, sum(spent_tokens) AS tokens, sum(spent_cents) AS cents, count(*) AS taskCount
    FROM tasks WHERE ${scope} GROUP BY billing_code ORDER BY billing_code`,
  ).all({ goal: goalId, root: root ?? 0 }) as (Rollup & { billingCode: string })[];
}

/** Each goal's tasks counted by status, for a page of goals (one grouped read over the goal index). */
export function taskCountsOfGoals(db: Database, goalIds: readonly number[]): Map<number, Record<string, number>> {
  const out = new Map<number, Record<string, number>>();
  if (goalIds.length === 0) return out;
  const rows = prepared(
    db,
    'SELECT goal_id AS goalId, status, count(*) AS n FROM tasks WHERE goal_id IN (SELECT value FROM json_each(?)) GROUP BY goal_id, status',
  ).all(JSON.stringify(goalIds)) as { goalId: number; status: string; n: number }[];
  for (const r of rows) out.set(r.goalId, { ...(out.get(r.goalId) ?? {}), [r.status]: r.n });
  return out;
}
