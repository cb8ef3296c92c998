import type { TaskEvent } from '../events/tasks.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run, type RunResult } from '../engine/projection-sql.js';
import { addSpend, consumeReservation, countTask, reserve } from './tasks-goal-totals.js';
import { verified } from './task-verdicts.js';
import { setTaskBlockers, taskBlockersDdl } from './task-blockers.js';

/**
 * Tasks as read tables. `tasks` holds each task — of a goal tree, or a project task with no goal — with
 * its leaf spend and open reservation; `goal_totals` keeps per-goal sums (task count, spend,
 * reservations, last activity; tasks-goal-totals.ts) so listing goals never scans their tasks. A subtree's
 * rollup is not stored: task-queries.ts sums it at read time with a recursive CTE.
 */
export type T = 'tasks' | 'goal_totals' | 'task_blockers';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.tasks}" (task_id, goal_id, parent_id, depth, ancestry, title, description, acceptance_criteria,
    billing_code, budget_tokens, budget_cents, verifier, verifier_kind, heartbeat, status, created_by, proposal_id, created_at, updated_at,
    owner_id, project_id, model, effort, priority) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  dispatched: `UPDATE "${t.tasks}" SET status = 'approved', assignee_agent_id = NULL, assignee_name = NULL, lease_expires_at = NULL, attempt = ?,
    rejections = 0, rejection_limit = NULL, updated_at = ? WHERE task_id = ?`,
  timedOut: `UPDATE "${t.tasks}" SET status = 'timeout', lease_expires_at = NULL, reserved_tokens = 0, reserved_cents = 0, failure_reason = ?,
    completed_at = ?, updated_at = ? WHERE task_id = ?`,
  updated: `UPDATE "${t.tasks}" SET title = coalesce(?, title), description = coalesce(?, description), project_id = coalesce(?, project_id),
    model = coalesce(?, model), effort = coalesce(?, effort), priority = coalesce(?, priority), updated_at = ? WHERE task_id = ?`,
  claim: `UPDATE "${t.tasks}" SET status = 'claimed', assignee_agent_id = ?, assignee_name = ?, lease_expires_at = ?, reserved_tokens = ?,
    reserved_cents = ?, claimed_at = coalesce(?, claimed_at), updated_at = ? WHERE task_id = ?`,
  renew: `UPDATE "${t.tasks}" SET lease_expires_at = ?, reserved_tokens = ?, reserved_cents = ?, updated_at = ? WHERE task_id = ?`,
  start: `UPDATE "${t.tasks}" SET status = 'in_progress', started_at = coalesce(started_at, ?), updated_at = ? WHERE task_id = ?`,
  complete: `UPDATE "${t.tasks}" SET status = 'awaiting_verification', summary = ?, artifact_message_ids = ?, lease_expires_at = NULL,
    reserved_tokens = 0, reserved_cents = 0, submitted_at = ?, updated_at = ? WHERE task_id = ?`,
  unassign: `UPDATE "${t.tasks}" SET status = 'approved', assignee_agent_id = NULL, assignee_name = NULL, lease_expires_at = NULL,
    reserved_tokens = 0, reserved_cents = 0, updated_at = ? WHERE task_id = ?`,
  cancel: `UPDATE "${t.tasks}" SET status = 'cancelled', lease_expires_at = NULL, reserved_tokens = 0, reserved_cents = 0, failure_reason = ?,
    completed_at = ?, updated_at = ? WHERE task_id = ?`,
  spend: `UPDATE "${t.tasks}" SET spent_tokens = spent_tokens + ?, spent_cents = spent_cents + ?, updated_at = ? WHERE task_id = ?`,
}));

export const tasksProjection: Projection<TaskEvent, T> = {
  name: 'tasks',
  // 4: the roots index, so a goal's roots cost O(roots), not O(tasks). 7: blocked_by and task_blockers (dependencies).
  // 8: spend consumes the task's open reservation. 9: rejections and rejection_limit (the rejection loop).
  version: 9,
  handles: [
    'TaskCreated',
    'TaskClaimed',
    'TaskStarted',
    'TaskCompleted',
    'TaskVerified',
    'TaskReleased',
    'ClaimExpired',
    'TaskCancelled',
    'CostRecorded',
    'TaskDispatched',
    'TaskUpdated',
    'TaskBlockersSet',
    'TaskTimedOut',
  ],
  tables: ['tasks', 'goal_totals', 'task_blockers'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.tasks}" (
        task_id INTEGER PRIMARY KEY, goal_id INTEGER, owner_id INTEGER, project_id INTEGER, model TEXT, effort TEXT,
        priority INTEGER NOT NULL DEFAULT 0, attempt INTEGER NOT NULL DEFAULT 1, parent_id INTEGER, depth INTEGER NOT NULL, ancestry TEXT NOT NULL,
        title TEXT NOT NULL, description TEXT NOT NULL, acceptance_criteria TEXT NOT NULL, billing_code TEXT NOT NULL,
        budget_tokens INTEGER, budget_cents INTEGER, spent_tokens INTEGER NOT NULL DEFAULT 0, spent_cents INTEGER NOT NULL DEFAULT 0,
        reserved_tokens INTEGER NOT NULL DEFAULT 0, reserved_cents INTEGER NOT NULL DEFAULT 0,
        verifier TEXT NOT NULL, verifier_kind TEXT NOT NULL, heartbeat TEXT, status TEXT NOT NULL,
        assignee_agent_id INTEGER, assignee_name TEXT, lease_expires_at TEXT, summary TEXT, artifact_message_ids TEXT,
        verdict TEXT, verified_by TEXT, failure_reason TEXT, verifier_output TEXT, rejections INTEGER NOT NULL DEFAULT 0, rejection_limit INTEGER,
        created_by TEXT NOT NULL, proposal_id INTEGER,
        created_at TEXT NOT NULL, claimed_at TEXT, started_at TEXT, submitted_at TEXT, completed_at TEXT, updated_at TEXT NOT NULL, blocked_by TEXT);
      CREATE INDEX IF NOT EXISTS "${t.tasks}_by_goal" ON "${t.tasks}" (goal_id, task_id);
      CREATE INDEX IF NOT EXISTS "${t.tasks}_by_parent" ON "${t.tasks}" (parent_id);
      CREATE INDEX IF NOT EXISTS "${t.tasks}_roots" ON "${t.tasks}" (goal_id, task_id) WHERE parent_id IS NULL;
      CREATE INDEX IF NOT EXISTS "${t.tasks}_by_project" ON "${t.tasks}" (project_id, status) WHERE project_id IS NOT NULL;
      CREATE INDEX IF NOT EXISTS "${t.tasks}_by_lease" ON "${t.tasks}" (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
      CREATE INDEX IF NOT EXISTS "${t.tasks}_awaiting" ON "${t.tasks}" (verifier_kind, status) WHERE status = 'awaiting_verification';
      CREATE TABLE IF NOT EXISTS "${t.goal_totals}" (
        goal_id INTEGER PRIMARY KEY, task_count INTEGER NOT NULL DEFAULT 0, spent_tokens INTEGER NOT NULL DEFAULT 0,
        spent_cents INTEGER NOT NULL DEFAULT 0, reserved_tokens INTEGER NOT NULL DEFAULT 0, reserved_cents INTEGER NOT NULL DEFAULT 0,
        last_activity_at TEXT NOT NULL);
      ${taskBlockersDdl(t)}
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    const at = e.recordedAt;
    switch (e.type) {
      case 'TaskCreated': {
        const d = e.data;
        const inserted: RunResult = yield run(
          q.insert,
          d.taskId,
          d.goalId,
          d.parentId,
          d.depth,
          JSON.stringify(d.ancestry),
          d.title,
          d.description,
          d.acceptanceCriteria,
          d.billingCode,
          d.budgets.tokens,
          d.budgets.cents,
          JSON.stringify(d.verifier),
          d.verifier.kind,
          d.heartbeat ? JSON.stringify(d.heartbeat) : null,
          d.status,
          d.by.name,
          d.proposalId,
          at,
          at,
          d.ownerId ?? null,
          d.projectId ?? null,
          d.plan?.model ?? null,
          d.plan?.effort ?? null,
          d.plan?.priority ?? 0,
        );
        if (inserted.changes > 0 && d.goalId !== null) yield* countTask(t, d.goalId, at);
        if (inserted.changes > 0 && d.blockedBy?.length) yield* setTaskBlockers(t, d.taskId, d.blockedBy);
        return;
      }
      case 'TaskBlockersSet':
        yield* setTaskBlockers(t, e.data.taskId, e.data.blockedBy, at);
        return;
      case 'TaskDispatched':
        yield run(q.dispatched, e.data.attempt, at, e.data.taskId);
        return;
      case 'TaskUpdated': {
        const c = e.data.changes;
        yield run(
          q.updated,
          c.title ?? null,
          c.description ?? null,
          c.projectId ?? null,
          c.model ?? null,
          c.effort ?? null,
          c.priority ?? null,
          at,
          e.data.taskId,
        );
        return;
      }
      case 'TaskTimedOut':
        yield* reserve(t, e.data.taskId, 0, 0, at);
        yield run(q.timedOut, e.data.reason, at, at, e.data.taskId);
        return;
      case 'TaskClaimed': {
        const d = e.data;
        yield* reserve(t, d.taskId, d.reservation.tokens, d.reservation.cents, at);
        if (d.renewed) yield run(q.renew, d.leaseExpiresAt, d.reservation.tokens, d.reservation.cents, at, d.taskId);
        else
          yield run(
            q.claim,
            d.agentId,
            d.agentName,
            d.leaseExpiresAt,
            d.reservation.tokens,
            d.reservation.cents,
            at,
            at,
            d.taskId,
          );
        return;
      }
      case 'TaskStarted':
        yield run(q.start, at, at, e.data.taskId);
        return;
      case 'TaskCompleted':
        yield* reserve(t, e.data.taskId, 0, 0, at);
        yield run(q.complete, e.data.summary, JSON.stringify(e.data.artifactMessageIds), at, at, e.data.taskId);
        return;
      case 'TaskVerified':
        yield* verified(t, e.data, at);
        return;
      case 'TaskReleased':
      case 'ClaimExpired':
        yield* reserve(t, e.data.taskId, 0, 0, at);
        yield run(q.unassign, at, e.data.taskId);
        return;
      case 'TaskCancelled':
        yield* reserve(t, e.data.taskId, 0, 0, at);
        yield run(q.cancel, e.data.reason, at, at, e.data.taskId);
        return;
      case 'CostRecorded': {
        const d = e.data;
        yield* consumeReservation(t, d.taskId, d.tokens, d.cents, at);
        yield run(q.spend, d.tokens, d.cents, at, d.taskId);
        if (d.goalId !== null) yield* addSpend(t, d.goalId, d.tokens, d.cents, at);
        return;
      }
      case 'TaskBudgetAlertRaised':
        return; // not in `handles`: its notice is the channels projection's; the task row has no alert column
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};
