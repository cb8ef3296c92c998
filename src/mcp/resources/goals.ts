import { goalFor } from '../../actions/goals.js';
import { readConsistent } from '../../engine/db.js';
import { goalSnapshot } from '../../projections/goal-snapshot.js';
import { taskCountsOfGoals } from '../../projections/task-queries.js';
import type { McpContext } from '../context.js';
import { orNotFound } from './access.js';
import { goalTreeUri, goalUri } from './uris.js';
import { type Caller } from '../../events/principals.js';
import { speaker } from '../../events/principals.js';

/**
 * colony://goals/{id} and colony://goals/{id}/tree: get_goal's snapshot (goalFor for the tenancy check,
 * goalSnapshot for the data) cut in two. The goal resource is the goal with its budgets, spend and
 * progress (task counts by status), its agents and cost breakdown; the tree resource is its task tree.
 * get_goal's recent_events (the channel's last 50 messages) stay out: with them every message posted to
 * the goal's channel would be an update of the goal — get_channel_messages reads the channel.
 */
const DONE = new Set(['done']);
const CLOSED = new Set(['done', 'failed', 'timeout', 'cancelled']);

export function goalResource(ctx: McpContext, caller: Caller, goalId: number) {
  const uri = goalUri(goalId);
  const db = ctx.app.engine.db;
  return readConsistent(db, () => {
    orNotFound(uri, () => goalFor(ctx.app, speaker(caller), goalId));
    const s = goalSnapshot(db, goalId)!;
    const byStatus = taskCountsOfGoals(db, [goalId]).get(goalId) ?? {};
    const count = (set: Set<string>) =>
      Object.entries(byStatus).reduce((n, [status, k]) => n + (set.has(status) ? k : 0), 0);
    const total = s.goal.task_count;
    return {
      goal: s.goal,
      progress: {
        task_count: total,
        by_status: byStatus,
        done: count(DONE),
        closed: count(CLOSED),
        percent_done: total === 0 ? null : Math.round((count(DONE) / total) * 1000) / 10,
      },
      spawned_agents: s.spawned_agents,
      cost_breakdown: s.cost_breakdown,
      links: { tree: goalTreeUri(goalId) },
    };
  });
}

export function goalTreeResource(ctx: McpContext, caller: Caller, goalId: number) {
  const uri = goalTreeUri(goalId);
  const db = ctx.app.engine.db;
  return readConsistent(db, () => {
    orNotFound(uri, () => goalFor(ctx.app, speaker(caller), goalId));
    const s = goalSnapshot(db, goalId)!;
    return {
      goal_id: goalId,
      goal_status: s.goal.status,
      rollup: s.cost_breakdown.total,
      tasks_tree: s.tasks_tree,
      links: { goal: goalUri(goalId) },
    };
  });
}
