import { senderKind } from '../events/channels.js';
import type { Database } from 'better-sqlite3';
import { readConsistent } from '../engine/db.js';
import { channelMessages } from './channel-queries.js';
import { getGoal, goalTotals, listGoals, type GoalRow, type GoalTotals } from './goal-queries.js';
import { rollupByBillingCode, taskCountsOfGoals, tasksOfGoal, type TaskRow } from './task-queries.js';
import { taskTree } from './goal-task-tree.js';
import { pendingTreeProposal } from './proposal-queries.js';
import { getAgent, getUser } from './principal-queries.js';

/**
 * The goal snapshot (what `GET /api/goals/:id` returns): goal, task tree with per-node rollups
 * (goal-task-tree.ts), the agents that work on it, the cost breakdown and the recent events of its channel.
 * It reads projections only and nothing of the wall clock, so `colony replay` gets the same answer from a
 * replayed database as the live one gave at that position.
 */

/** One goal as lists and snapshots show it; `t` is passed when the caller read the totals with the goal. */
export function goalView(db: Database, g: GoalRow, t: GoalTotals = goalTotals(db, g.goalId)) {
  const percent = (spent: number, budget: number | null) => (budget ? Math.round((spent / budget) * 1000) / 10 : null);
  return {
    id: g.goalId,
    slug: g.slug,
    title: g.title,
    description: g.description,
    status: g.status,
    owner_user_id: g.ownerId,
    owner: getUser(db, g.ownerId)?.name ?? '',
    channel_id: g.channelId,
    channel: `goal-${g.slug}`,
    coordinator_agent_id: g.coordinatorAgentId,
    coordinator: getAgent(db, g.coordinatorAgentId)?.name ?? '',
    approval_mode: g.approvalMode,
    require_evidence: g.requireEvidence,
    max_rejections: g.maxRejections ?? 0,
    max_spawn_depth: g.maxSpawnDepth,
    budget_tokens: g.budgetTokens,
    budget_dollars_cents: g.budgetCents,
    spent_tokens: t.spentTokens,
    spent_dollars_cents: t.spentCents,
    reserved_tokens: t.reservedTokens,
    reserved_dollars_cents: t.reservedCents,
    percent_budget: {
      tokens: percent(t.spentTokens, g.budgetTokens),
      dollars_cents: percent(t.spentCents, g.budgetCents),
    },
    alert_80pct_posted: { tokens: g.alertTokens, dollars_cents: g.alertCents },
    paused_reason: g.pausedReason,
    completion_summary: g.completionSummary,
    completed_at: g.completedAt,
    created_at: g.createdAt,
    updated_at: g.updatedAt,
    task_count: t.taskCount,
    last_activity_at: t.lastActivityAt ?? g.updatedAt,
  };
}

/** A page of goal views (list_goals, GET /api/goals, colony goals list), all of one moment of the log. */
export function goalList(db: Database, ownerId: number, f: Parameters<typeof listGoals>[2]) {
  return readConsistent(db, () => {
    const { goals, total } = listGoals(db, ownerId, f);
    const counts = taskCountsOfGoals(
      db,
      goals.map((g) => g.goalId),
    );
    return {
      goals: goals.map((g) => ({ ...goalView(db, g, g.totals), task_statuses: counts.get(g.goalId) ?? {} })),
      total,
    };
  });
}

/** Read in one read transaction: its parts (goal, totals, tasks, messages) are of one moment of the log. */
export function goalSnapshot(db: Database, goalId: number) {
  return readConsistent(db, () => snapshotOf(db, goalId));
}

function snapshotOf(db: Database, goalId: number) {
  const g = getGoal(db, goalId);
  if (!g) return null;
  const tasks = tasksOfGoal(db, goalId);
  const roots = taskTree(tasks);
  const total = roots.reduce(
    (r, n) => ({
      tokens: r.tokens + n.rollup.tokens,
      dollars_cents: r.dollars_cents + n.rollup.dollars_cents,
      task_count: r.task_count + n.rollup.task_count,
    }),
    { tokens: 0, dollars_cents: 0, task_count: 0 },
  );
  const pending = pendingTreeProposal(db, goalId);
  return {
    goal: { ...goalView(db, g), pending_proposal_id: pending?.proposalId ?? null },
    tasks_tree: roots,
    spawned_agents: agentsOf(db, g, tasks),
    cost_breakdown: {
      total,
      by_billing_code: rollupByBillingCode(db, goalId, null).map((r) => ({
        billing_code: r.billingCode,
        tokens: r.tokens,
        dollars_cents: r.cents,
        task_count: r.taskCount,
      })),
    },
    recent_events: channelMessages(db, g.channelId, 50, null).map((m) => ({
      id: m.messageId,
      from: m.fromName,
      from_kind: senderKind(m.fromKey),
      body: m.body,
      kind: (m.metadata?.kind as string | undefined) ?? m.kind,
      event: (m.metadata?.event as string | undefined) ?? null,
      created_at: m.createdAt,
    })),
  };
}

/** The coordinator and every agent that holds or held one of the goal's tasks. */
function agentsOf(db: Database, g: GoalRow, tasks: TaskRow[]) {
  const ids = [
    g.coordinatorAgentId,
    ...new Set(tasks.map((t) => t.assigneeAgentId).filter((id): id is number => id !== null)),
  ];
  return [...new Set(ids)]
    .map((id) => getAgent(db, id))
    .filter((a) => a !== null)
    .map((a) => ({
      id: a.agentId,
      name: a.name,
      role: a.agentId === g.coordinatorAgentId ? 'coordinator' : 'specialist',
      model: a.model,
      autonomy_tier: a.tier,
      spawn_depth: a.spawnDepth,
      parent_agent_name: a.parentId === null ? null : (getAgent(db, a.parentId)?.name ?? null),
      quarantined: a.quarantined,
      tasks: tasks.filter((t) => t.assigneeAgentId === a.agentId).map((t) => t.taskId),
    }));
}
