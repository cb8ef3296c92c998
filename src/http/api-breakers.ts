import type { Router } from 'express';
import * as z from 'zod';
import { configureBreakers, resumeAgent } from '../actions/breakers.js';
import { breakerDetail, breakerView } from '../actions/breakers/view.js';
import type { McpContext } from '../mcp/context.js';
import { openBreakersOf } from '../projections/breaker-queries.js';
import { agentOf } from './api-agent-views.js';
import { actor, body, callerOf, ownerOf } from './api-common.js';
import { mayReadRunsOf, readableBy } from '../mcp/views/readable.js';

/**
 * Loop breakers in the console: `POST /api/agents/:name/resume` lifts the agent's open breakers (one
 * goal's with `goal_id` — null for its work outside goals — or all without it), the owner's alone (an
 * agent's session is refused), and answers with what was lifted and what stays open.
 * `GET /api/agents/:name/breakers` shows its thresholds in effect and its open breakers; `POST` to it sets
 * its own thresholds (a number ≥ 0, 0 turning that detector off; null back to the default). The attention
 * list and the agent page show open breakers as `breakerView` shapes them.
 */
const ResumeBody = z.strictObject({ goal_id: z.number().int().positive().nullable().optional() });
const Threshold = z.number().int().min(0).max(1_000_000).nullable().optional();
const ThresholdsBody = z.strictObject({
  max_runs_without_progress: Threshold,
  max_repeated_failures: Threshold,
  max_wakes_per_hour: Threshold,
});

export function mountBreakers(router: Router, ctx: McpContext): void {
  const db = ctx.app.engine.db;
  router.get('/agents/:name/breakers', (req, res) => {
    const agent = agentOf(db, req);
    const readable = readableBy({ app: ctx.app, caller: callerOf(req) });
    res.json({ agent: agent.name, ...breakerDetail(db, agent.agentId, mayReadRunsOf(readable, agent.agentId)) });
  });
  router.post('/agents/:name/breakers', (req, res) => {
    const owner = ownerOf(req, 'sets breaker thresholds');
    const agent = agentOf(db, req);
    const b = body(ThresholdsBody, req);
    const changes = {
      maxRunsWithoutProgress: b.max_runs_without_progress,
      maxRepeatedFailures: b.max_repeated_failures,
      maxWakesPerHour: b.max_wakes_per_hour,
    };
    configureBreakers(ctx.app, owner.userId, agent.agentId, changes, actor(req));
    res.json({ agent: agent.name, ...breakerDetail(db, agent.agentId) });
  });
  router.post('/agents/:name/resume', (req, res) => {
    const owner = ownerOf(req, 'lifts breakers');
    const agent = agentOf(db, req);
    const { goal_id } = body(ResumeBody, req);
    const lifted = resumeAgent(
      ctx.app,
      owner.userId,
      agent.agentId,
      goal_id === undefined ? 'all' : goal_id,
      actor(req),
    );
    res.json({
      agent: agent.name,
      lifted: lifted.map((l) => ({ goal_id: l.goalId, breaker: l.breaker })),
      open: openBreakersOf(db, agent.agentId).map((b) => breakerView(b)),
    });
  });
}

export { breakerDetail, breakerView };
