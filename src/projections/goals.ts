import type { GoalEvent } from '../events/goals.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/** Goals as a read table; queries live in goal-queries.ts (they join the tasks projection's tables). */
export type T = 'goals';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.goals}" (goal_id, owner_id, slug, title, description, status, channel_id, coordinator_agent_id,
    coordinator_template, budget_tokens, budget_cents, max_spawn_depth, approval_mode, require_evidence, max_rejections, created_by, created_at,
    updated_at) VALUES (?, ?, ?, ?, ?, 'draft', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  status: `UPDATE "${t.goals}" SET status = ?, updated_at = ? WHERE goal_id = ?`,
  paused: `UPDATE "${t.goals}" SET status = 'paused', paused_reason = ?, updated_at = ? WHERE goal_id = ?`,
  resumed: `UPDATE "${t.goals}" SET status = 'active', paused_reason = NULL, budget_tokens = ?, budget_cents = ?,
    alert_tokens = CASE WHEN ? = 1 THEN 0 ELSE alert_tokens END, alert_cents = CASE WHEN ? = 1 THEN 0 ELSE alert_cents END, updated_at = ? WHERE goal_id = ?`,
  closed: `UPDATE "${t.goals}" SET status = ?, completion_summary = ?, completed_at = ?, updated_at = ? WHERE goal_id = ?`,
  alertTokens: `UPDATE "${t.goals}" SET alert_tokens = 1, updated_at = ? WHERE goal_id = ?`,
  alertCents: `UPDATE "${t.goals}" SET alert_cents = 1, updated_at = ? WHERE goal_id = ?`,
  mode: `UPDATE "${t.goals}" SET approval_mode = ?, updated_at = ? WHERE goal_id = ?`,
  evidence: `UPDATE "${t.goals}" SET require_evidence = ?, max_rejections = ?, updated_at = ? WHERE goal_id = ?`,
}));

export const goalsProjection: Projection<GoalEvent, T> = {
  name: 'goals',
  // 3: the evidence rule (require_evidence, max_rejections).
  version: 3,
  handles: [
    'GoalCreated',
    'GoalActivated',
    'GoalPaused',
    'GoalResumed',
    'GoalClosed',
    'BudgetAlertRaised',
    'GoalApprovalModeSet',
    'GoalEvidenceRuleSet',
  ],
  tables: ['goals'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.goals}" (
        goal_id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL, slug TEXT NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL,
        status TEXT NOT NULL, channel_id INTEGER NOT NULL, coordinator_agent_id INTEGER NOT NULL, coordinator_template TEXT NOT NULL,
        budget_tokens INTEGER, budget_cents INTEGER, max_spawn_depth INTEGER NOT NULL, approval_mode TEXT NOT NULL,
        require_evidence INTEGER NOT NULL DEFAULT 0, max_rejections INTEGER,
        alert_tokens INTEGER NOT NULL DEFAULT 0, alert_cents INTEGER NOT NULL DEFAULT 0, paused_reason TEXT,
        completion_summary TEXT, completed_at TEXT, created_by TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE UNIQUE INDEX IF NOT EXISTS "${t.goals}_by_slug" ON "${t.goals}" (owner_id, slug);
      CREATE INDEX IF NOT EXISTS "${t.goals}_by_status" ON "${t.goals}" (owner_id, status);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    const at = e.recordedAt;
    switch (e.type) {
      case 'GoalCreated': {
        const g = e.data;
        yield run(
          q.insert,
          g.goalId,
          g.ownerId,
          g.slug,
          g.title,
          g.description,
          g.channelId,
          g.coordinatorAgentId,
          g.coordinatorTemplate,
          g.budgets.tokens,
          g.budgets.cents,
          g.maxSpawnDepth,
          g.approvalMode,
          g.requireEvidence ? 1 : 0,
          // Null: a goal from before the rejection loop, whose rejections fail the task as they always did.
          g.maxRejections ?? null,
          g.by,
          at,
          at,
        );
        return;
      }
      case 'GoalActivated':
        yield run(q.status, 'active', at, e.data.goalId);
        return;
      case 'GoalPaused':
        yield run(
          q.paused,
          `budget: ${e.data.dimension} ${e.data.spent}${e.data.requested ? ` + ${e.data.requested}` : ''} of ${e.data.budget}`,
          at,
          e.data.goalId,
        );
        return;
      case 'GoalResumed': {
        const d = e.data;
        yield run(
          q.resumed,
          d.budgets.tokens,
          d.budgets.cents,
          d.rearm.tokens ? 1 : 0,
          d.rearm.cents ? 1 : 0,
          at,
          d.goalId,
        );
        return;
      }
      case 'GoalClosed':
        yield run(q.closed, e.data.to, e.data.summary, at, at, e.data.goalId);
        return;
      case 'BudgetAlertRaised':
        yield run(e.data.dimension === 'tokens' ? q.alertTokens : q.alertCents, at, e.data.goalId);
        return;
      case 'GoalApprovalModeSet':
        yield run(q.mode, e.data.to, at, e.data.goalId);
        return;
      case 'GoalEvidenceRuleSet':
        yield run(q.evidence, e.data.to.requireEvidence ? 1 : 0, e.data.to.maxRejections, at, e.data.goalId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};
