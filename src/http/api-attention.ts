import type { Router } from 'express';
import { proposalView } from '../actions/proposals/card.js';
import { readConsistent } from '../engine/db.js';
import type { McpContext } from '../mcp/context.js';
import { nodeProblemView } from '../mcp/views/integrity.js';
import { mayReadRunsOf, readableBy } from '../mcp/views/readable.js';
import {
  failingAgents,
  goalsNeedingOwner,
  pendingCounts,
  quarantinedAgents,
  type GoalNeedingOwner,
} from '../projections/attention-queries.js';
import { openBreakerCount, openBreakersOfOwner } from '../projections/breaker-queries.js';
import { tasksNeedingOwner, tasksNeedingOwnerCount, type TaskNeedingOwner } from '../projections/evidence-queries.js';
import { proposalsOf } from '../projections/proposal-queries.js';
import { requestsOf } from '../projections/resources.js';
import { stalledGoalsTold } from '../projections/sweep-queries.js';
import { STALL_EVENT } from '../runtime/goal-stalls.js';
import type { Caller } from '../events/principals.js';
import { callerOf, speakerOf } from './api-common.js';
import { requestView } from './api-requests.js';
import { breakerView } from './api-breakers.js';
import type { OAuthDesk } from './oauth-desk.js';

/**
 * `GET /api/attention`: everything that waits on the owner, in one read — the console's "Needs you" page
 * and the counts on its navigation. Pending proposals (with the commands approving them would run),
 * resource requests, goals paused, stuck, past 80 % of a budget or stalled (a draft nobody plans), agents
 * whose runs keep failing, agents a loop breaker paused on a goal, quarantined agents, (the owner only) how many OAuth authorization requests
 * wait, and on a PostgreSQL node whether this node cannot follow its store (`node`: what /health says). Each item names the decision that clears it; the decisions are the routes that already exist.
 * The counts are of all that wait; the lists show the newest 200 of each.
 */
const MAX_LISTED = 200;

export function mountAttention(router: Router, ctx: McpContext, desk?: OAuthDesk): void {
  router.get('/attention', (req, res) => {
    const { pending, breakerCount, verdictCount, ...lists } = waitingOn(ctx, speakerOf(req).tenant, callerOf(req));
    const oauth = desk && callerOf(req).kind === 'owner' ? desk.waiting().length : 0;
    // A PostgreSQL node that cannot follow its store: everything listed may be behind, and writes may fail.
    const node = nodeProblemView(ctx.node.problem());
    const counts = {
      approvals: pending.proposals,
      requests: pending.requests,
      goals: lists.goals.length,
      runs: lists.failing_agents.length,
      quarantined: lists.quarantined.length,
      breakers: breakerCount,
      verdicts: verdictCount,
      oauth,
      node: node ? 1 : 0,
    };
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    res.json({ counts: { total, ...counts }, ...lists, oauth_waiting: oauth, node });
  });
}

/** What waits in the log, read in one consistent snapshot (the counts and the lists agree). */
function waitingOn(ctx: McpContext, tenant: number, caller: Caller) {
  const db = ctx.app.engine.db;
  // An agent's session sees why another agent's runs fail only where it may read that agent's runs.
  const readable = readableBy({ app: ctx.app, caller });
  return readConsistent(db, () => ({
    proposals: proposalsOf(db, tenant, 'pending', MAX_LISTED).map((p) => outlineOnly(proposalView(db, p))),
    pending: pendingCounts(db, tenant),
    breakerCount: openBreakerCount(db, tenant),
    verdictCount: tasksNeedingOwnerCount(db, tenant),
    verdicts: tasksNeedingOwner(db, tenant, MAX_LISTED).map(verdictNeed),
    requests: requestsOf(db, tenant, 'pending', MAX_LISTED).map(requestView),
    goals: [
      ...stalledGoalsTold(db, tenant, STALL_EVENT).map((s) => ({
        goal_id: s.goalId,
        title: s.title,
        kind: 'stalled' as const,
        status: 'draft',
        reason: s.told,
        at: s.toldAt,
      })),
      ...goalsNeedingOwner(db, tenant).map(goalItem),
    ],
    failing_agents: failingAgents(db, tenant).map((a) => ({
      agent: a.name,
      agent_id: a.agentId,
      failures: a.failures,
      run_id: a.runId,
      status: a.status,
      cause: a.cause,
      reason: mayReadRunsOf(readable, a.agentId) ? a.reason : null,
      goal_id: a.goalId,
      task_id: a.taskId,
      at: a.at,
    })),
    breakers: openBreakersOfOwner(db, tenant, MAX_LISTED).map((b) =>
      breakerView(b, mayReadRunsOf(readable, b.agentId)),
    ),
    quarantined: quarantinedAgents(db, tenant).map((a) => ({
      agent: a.name,
      agent_id: a.agentId,
      reason: a.reason,
      at: a.at,
    })),
  }));
}

/**
 * The list is fetched again on every burst of events in every open tab: a big tree stays behind (its
 * commands never do) and the card links to its goal, whose page fetches it whole.
 */
const TREE_SHOWN = 30;
function outlineOnly<P extends { task_count?: number; tree?: unknown }>(p: P): P & { tree_omitted?: boolean } {
  return (p.task_count ?? 0) > TREE_SHOWN ? { ...p, tree: undefined, tree_omitted: true } : p;
}

function goalItem(g: GoalNeedingOwner) {
  const kind = g.status === 'active' ? ('budget_alert' as const) : g.status;
  const over = [
    g.alertCents && g.budgetCents ? `${Math.round((g.spentCents / g.budgetCents) * 100)} % of its cost budget` : null,
    g.alertTokens && g.budgetTokens
      ? `${Math.round((g.spentTokens / g.budgetTokens) * 100)} % of its token budget`
      : null,
  ].filter((x) => x !== null);
  return {
    goal_id: g.goalId,
    title: g.title,
    kind,
    status: g.status,
    reason:
      kind === 'budget_alert'
        ? `It has used ${over.join(' and ')}; at 100 % it pauses.`
        : kind === 'paused'
          ? (g.pausedReason ?? 'paused')
          : (g.completionSummary ?? 'marked stuck'),
    budget_tokens: g.budgetTokens,
    budget_dollars_cents: g.budgetCents,
    spent_tokens: g.spentTokens,
    spent_dollars_cents: g.spentCents,
    at: g.updatedAt,
  };
}

/** A task that waits on the owner: a leaf handed in with no verifier but the owner, or one failed at its goal's retry limit. */
const verdictNeed = (t: TaskNeedingOwner) => ({
  kind: t.kind,
  task_id: t.taskId,
  title: t.title,
  goal_id: t.goalId,
  goal_title: t.goalTitle,
  assignee: t.assigneeName,
  summary: t.summary,
  reason: t.reason,
  verified_by: t.verifiedBy,
  rejections: t.rejections,
  max_rejections: t.rejectionLimit,
  at: t.at,
});
