import type { Database } from 'better-sqlite3';
import { prepared, readConsistent } from '../engine/db.js';
import { applySteps, get, type Steps } from '../engine/projection-sql.js';
import type { ApprovalMode, GoalStatus } from '../events/goals.js';

/**
 * Reads over the goals projection and the per-goal sums the tasks projection keeps in goal_totals
 * (live names). Tasks: task-queries.ts; proposals: proposal-queries.ts.
 */
export interface GoalRow {
  goalId: number;
  ownerId: number;
  slug: string;
  title: string;
  description: string;
  status: GoalStatus;
  channelId: number;
  coordinatorAgentId: number;
  coordinatorTemplate: string;
  budgetTokens: number | null;
  budgetCents: number | null;
  maxSpawnDepth: number;
  approvalMode: ApprovalMode;
  /** Done only with evidence; and the retry limit of rejected hand-ins (null: a goal from before the rejection loop). */
  requireEvidence: boolean;
  maxRejections: number | null;
  alertTokens: boolean;
  alertCents: boolean;
  pausedReason: string | null;
  completionSummary: string | null;
  completedAt: string | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}
export interface GoalTotals {
  taskCount: number;
  spentTokens: number;
  spentCents: number;
  reservedTokens: number;
  reservedCents: number;
  lastActivityAt: string | null;
}
const GOAL = `SELECT goal_id AS goalId, owner_id AS ownerId, slug, title, description, status, channel_id AS channelId,
  coordinator_agent_id AS coordinatorAgentId, coordinator_template AS coordinatorTemplate, budget_tokens AS budgetTokens,
  budget_cents AS budgetCents, max_spawn_depth AS maxSpawnDepth, approval_mode AS approvalMode, require_evidence AS requireEvidence,
  max_rejections AS maxRejections, alert_tokens AS alertTokens,
  alert_cents AS alertCents, paused_reason AS pausedReason, completion_summary AS completionSummary, completed_at AS completedAt,
  created_by AS createdBy, created_at AS createdAt, updated_at AS updatedAt FROM goals`;
const toGoal = (r: Record<string, unknown> | undefined): GoalRow | null =>
  r
    ? ({
        ...r,
        alertTokens: r.alertTokens === 1,
        alertCents: r.alertCents === 1,
        requireEvidence: r.requireEvidence === 1,
      } as unknown as GoalRow)
    : null;

export function* readGoal(goalId: number): Steps<GoalRow | null> {
  return toGoal(yield* get(`${GOAL} WHERE goal_id = ?`, goalId));
}
export const getGoal = (db: Database, goalId: number): GoalRow | null => applySteps(db, readGoal(goalId));
/** The goal whose #goal-<slug> channel this is, if any. */
export const goalIdOfChannel = (db: Database, channelId: number): number | null =>
  (prepared(db, 'SELECT goal_id AS id FROM goals WHERE channel_id = ?').get(channelId) as { id: number } | undefined)
    ?.id ?? null;
export const slugTaken = (db: Database, ownerId: number, slug: string): boolean =>
  prepared(db, 'SELECT 1 FROM goals WHERE owner_id = ? AND slug = ?').get(ownerId, slug) !== undefined;

export const goalTotals = (db: Database, goalId: number): GoalTotals => applySteps(db, readGoalTotals(goalId));
export function* readGoalTotals(goalId: number): Steps<GoalTotals> {
  const row = yield* get<GoalTotals>(
    `SELECT task_count AS taskCount, spent_tokens AS spentTokens, spent_cents AS spentCents, reserved_tokens AS reservedTokens,
    reserved_cents AS reservedCents, last_activity_at AS lastActivityAt FROM goal_totals WHERE goal_id = ?`,
    goalId,
  );
  return (
    row ?? { taskCount: 0, spentTokens: 0, spentCents: 0, reservedTokens: 0, reservedCents: 0, lastActivityAt: null }
  );
}

export interface GoalListItem extends GoalRow {
  totals: GoalTotals;
}
/** A page of goals with their totals and the count of all that match, read in one read transaction. */
export function listGoals(
  db: Database,
  ownerId: number,
  f: { status: GoalStatus | null; limit: number; offset: number },
): { goals: GoalListItem[]; total: number } {
  return readConsistent(db, () => goalPage(db, ownerId, f));
}

function goalPage(
  db: Database,
  ownerId: number,
  f: { status: GoalStatus | null; limit: number; offset: number },
): { goals: GoalListItem[]; total: number } {
  const rows = prepared(
    db,
    `SELECT g.*, t.task_count AS taskCount, t.spent_tokens AS spentTokens, t.spent_cents AS spentCents,
      t.reserved_tokens AS reservedTokens, t.reserved_cents AS reservedCents, t.last_activity_at AS lastActivityAt
    FROM (${GOAL} WHERE owner_id = @owner AND (@status IS NULL OR status = @status)) g LEFT JOIN goal_totals t ON t.goal_id = g.goalId
    ORDER BY g.goalId DESC LIMIT @limit OFFSET @offset`,
  ).all({ owner: ownerId, status: f.status, limit: f.limit, offset: f.offset }) as Record<string, unknown>[];
  const total = (
    prepared(db, 'SELECT count(*) AS n FROM goals WHERE owner_id = ? AND (? IS NULL OR status = ?)').get(
      ownerId,
      f.status,
      f.status,
    ) as { n: number }
  ).n;
  const goals = rows.map((r) => {
    const { taskCount, spentTokens, spentCents, reservedTokens, reservedCents, lastActivityAt, ...g } = r;
    return {
      ...toGoal(g)!,
      totals: {
        taskCount: (taskCount as number) ?? 0,
        spentTokens: (spentTokens as number) ?? 0,
        spentCents: (spentCents as number) ?? 0,
        reservedTokens: (reservedTokens as number) ?? 0,
        reservedCents: (reservedCents as number) ?? 0,
        lastActivityAt: (lastActivityAt as string) ?? null,
      },
    };
  });
  return { goals, total };
}
