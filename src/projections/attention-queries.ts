import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';

/**
 * What waits on the owner, beyond proposals and resource requests (their own queries): goals that are
 * paused, stuck or past 80 % of a budget, agents whose runs keep failing, and quarantined agents. The
 * console's "Needs you" page (http/api-attention.ts). Each list empties by the owner's decision — resume or
 * raise the budget, a run that succeeds (or the agent stopped), the quarantine lifted — so nothing here
 * needs an acknowledgement of its own.
 */
export interface GoalNeedingOwner {
  goalId: number;
  title: string;
  status: 'active' | 'paused' | 'stuck';
  pausedReason: string | null;
  completionSummary: string | null;
  budgetTokens: number | null;
  budgetCents: number | null;
  spentTokens: number;
  spentCents: number;
  alertTokens: boolean;
  alertCents: boolean;
  updatedAt: string;
}

/** Paused and stuck goals, and active ones whose 80 % budget alert is up (raising the budget re-arms it). */
export const goalsNeedingOwner = (db: Database, ownerId: number): GoalNeedingOwner[] =>
  (
    prepared(
      db,
      `SELECT g.goal_id AS goalId, g.title, g.status, g.paused_reason AS pausedReason, g.completion_summary AS completionSummary,
        g.budget_tokens AS budgetTokens, g.budget_cents AS budgetCents, COALESCE(t.spent_tokens, 0) AS spentTokens,
        COALESCE(t.spent_cents, 0) AS spentCents, g.alert_tokens AS alertTokens, g.alert_cents AS alertCents, g.updated_at AS updatedAt
       FROM goals g LEFT JOIN goal_totals t ON t.goal_id = g.goal_id
      WHERE g.owner_id = ? AND (g.status IN ('paused', 'stuck') OR (g.status = 'active' AND (g.alert_tokens = 1 OR g.alert_cents = 1)))
      ORDER BY g.updated_at DESC, g.goal_id DESC`,
    ).all(ownerId) as Record<string, unknown>[]
  ).map((r) => ({ ...r, alertTokens: r.alertTokens === 1, alertCents: r.alertCents === 1 }) as GoalNeedingOwner);

export interface FailingAgent {
  agentId: number;
  name: string;
  /** Its runs that failed (or were refused or timed out) since its last one that succeeded. */
  failures: number;
  runId: number;
  status: string;
  cause: string | null;
  reason: string | null;
  goalId: number | null;
  taskId: number | null;
  at: string;
}

/**
 * A run that counts as a failure: failed or timed out on its own, or refused for a reason the owner did not
 * choose (a daily budget, a missing backend). A run the owner cancelled, or refused because the owner
 * stopped the agent, it is quarantined or a breaker paused it (their own items), is no failure.
 */
const FAILURE = `((r.status IN ('failed', 'timed_out') AND r.cancelled_by IS NULL)
  OR (r.status = 'refused' AND COALESCE(r.gate, '') NOT IN ('stopped', 'quarantine', 'breaker')))`;

/**
 * Agents not stopped whose last finished run is a failure, with how many in a row and the last one's cause
 * and words. A later run that succeeds, or stopping the agent, takes it off the list.
 */
export const failingAgents = (db: Database, ownerId: number): FailingAgent[] =>
  prepared(
    db,
    `WITH last AS (
       SELECT agent_id, max(run_id) AS run_id FROM runs r
        WHERE owner_id = ? AND (status = 'succeeded' OR ${FAILURE}) GROUP BY agent_id)
     SELECT r.agent_id AS agentId, a.name, r.run_id AS runId, r.status, r.cause, r.reason, r.goal_id AS goalId, r.task_id AS taskId,
       COALESCE(r.finished_at, r.updated_at) AS at,
       (SELECT count(*) FROM runs r WHERE r.agent_id = last.agent_id AND ${FAILURE}
          AND r.run_id > COALESCE((SELECT max(run_id) FROM runs s WHERE s.agent_id = last.agent_id AND s.status = 'succeeded'), 0)) AS failures
       FROM last JOIN runs r ON r.run_id = last.run_id JOIN agents a ON a.agent_id = r.agent_id
       LEFT JOIN agent_runtime rt ON rt.agent_id = r.agent_id
      WHERE r.status <> 'succeeded' AND COALESCE(rt.stopped, 0) = 0
      ORDER BY r.run_id DESC`,
  ).all(ownerId) as FailingAgent[];

export interface QuarantinedAgent {
  agentId: number;
  name: string;
  reason: string | null;
  at: string | null;
}

export const quarantinedAgents = (db: Database, ownerId: number): QuarantinedAgent[] =>
  prepared(
    db,
    `SELECT agent_id AS agentId, name, quarantine_reason AS reason, quarantined_at AS at FROM agents
      WHERE owner_id = ? AND quarantined = 1 ORDER BY quarantined_at DESC, agent_id DESC`,
  ).all(ownerId) as QuarantinedAgent[];

/** How many proposals and resource requests wait, however many the lists show. */
export const pendingCounts = (db: Database, ownerId: number): { proposals: number; requests: number } =>
  prepared(
    db,
    `SELECT (SELECT count(*) FROM proposals WHERE owner_id = @o AND status = 'pending') AS proposals,
            (SELECT count(*) FROM resource_requests WHERE owner_id = @o AND status = 'pending') AS requests`,
  ).get({ o: ownerId }) as { proposals: number; requests: number };
