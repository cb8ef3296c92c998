import type { Database } from 'better-sqlite3';
import type { Router } from 'express';
import { readConsistent } from '../engine/db.js';
import type { Speaker } from '../events/principals.js';
import type { McpContext } from '../mcp/context.js';
import { getChannel, getMessage } from '../projections/channel-queries.js';
import { artifactIdsInChannel, runningRunsOfGoal, webappsPresentedBy } from '../projections/goal-outcome-queries.js';
import { tasksOfGoal } from '../projections/task-queries.js';
import { Id, parse, speakerOf } from './api-common.js';
import { goalFor } from '../actions/goals.js';

/**
 * `GET /api/goals/:id/outcome`: what the goal produced and who is on it — the artifacts (messages its
 * channel marks as artifacts and those its tasks named), the web apps its agents presented since it began,
 * and the runs going on for it now. The goal page's header and "Produced" section; the tree and the
 * channel come from their own routes.
 */
const MAX_ARTIFACTS = 200;
const BODY_CHARS = 4000;

export function mountGoalOutcome(router: Router, ctx: McpContext): void {
  const db = ctx.app.engine.db;
  router.get('/goals/:id/outcome', (req, res) => {
    const by = speakerOf(req);
    const goal = goalFor(ctx.app, by, parse(Id, req.params.id, 'id'));
    res.json(
      readConsistent(db, () => {
        const tasks = tasksOfGoal(db, goal.goalId);
        const named = tasks.flatMap((t) => t.artifactMessageIds);
        const ids = [...new Set([...artifactIdsInChannel(db, goal.channelId, MAX_ARTIFACTS), ...named])].sort(
          (a, b) => a - b,
        );
        const agents = [goal.coordinatorAgentId, ...tasks.map((t) => t.assigneeAgentId).filter((a) => a !== null)];
        return {
          artifacts: visibleArtifacts(db, by, ids.slice(0, MAX_ARTIFACTS)).map((a) => ({
            ...a,
            task_ids: tasks.filter((t) => t.artifactMessageIds.includes(a.message_id)).map((t) => t.taskId),
          })),
          webapps: webappsPresentedBy(db, [...new Set(agents)], goal.createdAt).map((w) => ({
            app_id: w.appId,
            url: `/apps/${w.appId}/`,
            kind: w.kind,
            title: w.title,
            description: w.description,
            agent: w.agent,
            presented_at: w.presentedAt,
            retired_at: w.retiredAt,
          })),
          working: runningRunsOfGoal(db, goal.goalId).map((r) => ({
            run_id: r.runId,
            agent: r.agent,
            task_id: r.taskId,
            started_at: r.startedAt,
          })),
        };
      }),
    );
  });
}

/**
 * The messages among `ids` the caller may read: in its tenant's channels, and a direct conversation's only
 * when the caller is the owner or one of its two members.
 */
export function visibleArtifacts(db: Database, by: Speaker, ids: readonly number[]) {
  const owner = by.key === `user-${by.tenant}`;
  return ids
    .map((id) => getMessage(db, id))
    .filter((m) => {
      const c = m && getChannel(db, m.channelId);
      return !!c && c.ownerId === by.tenant && (c.kind !== 'dm' || owner || c.members.includes(by.key));
    })
    .map((m) => ({
      message_id: m!.messageId,
      channel: m!.channelName,
      from: m!.fromName,
      subject: m!.subject,
      body: m!.body.length > BODY_CHARS ? `${m!.body.slice(0, BODY_CHARS)}…` : m!.body,
      truncated: m!.body.length > BODY_CHARS,
      at: m!.createdAt,
    }));
}
