import type { Router } from 'express';
import * as z from 'zod';
import { startAgent, stopAgent } from '../actions/runs/agent-controls.js';
import { unquarantineAgent } from '../actions/reputation.js';
import { requestRun } from '../actions/runs.js';
import type { McpContext } from '../mcp/context.js';
import { getAgent, type AgentRow } from '../projections/principal-queries.js';
import { runtimeOf } from '../projections/run-queries.js';
import { agentOf } from './api-agent-views.js';
import { actor, body, ownerOf } from './api-common.js';

/**
 * The owner's controls over an agent in the console: unquarantine, stop, start, wake. Each is one
 * command; an agent's session is refused (ownerOf). The first three answer with the agent's state after.
 */
const StopBody = z.strictObject({ reason: z.string().trim().min(1).max(2000).optional() });
const WakeBody = z.strictObject({ prompt: z.string().trim().min(1).max(16_000).optional() });

export function mountAgentControls(router: Router, ctx: McpContext): void {
  const db = ctx.app.engine.db;
  const runtimeView = (agent: AgentRow) => {
    const rt = runtimeOf(db, agent.agentId);
    return {
      agent_id: agent.agentId,
      name: agent.name,
      status: rt.status,
      stopped: rt.stopped,
      quarantined: getAgent(db, agent.agentId)!.quarantined,
    };
  };

  router.post('/agents/:name/unquarantine', (req, res) => {
    const owner = ownerOf(req, 'lifts quarantines');
    const agent = agentOf(db, req);
    body(z.strictObject({}), req);
    unquarantineAgent(ctx.app, owner.userId, agent.agentId, `user:${owner.name}`, actor(req));
    res.json(runtimeView(agent));
  });
  router.post('/agents/:name/stop', (req, res) => {
    const owner = ownerOf(req, 'stops agents');
    const agent = agentOf(db, req);
    const { reason } = body(StopBody, req);
    stopAgent(
      ctx.app,
      owner.userId,
      agent.agentId,
      `user-${owner.userId}`,
      reason ?? 'stopped by the owner',
      actor(req),
    );
    res.json(runtimeView(agent));
  });
  router.post('/agents/:name/start', (req, res) => {
    const owner = ownerOf(req, 'starts agents');
    const agent = agentOf(db, req);
    body(z.strictObject({}), req);
    startAgent(ctx.app, owner.userId, agent.agentId, `user-${owner.userId}`, actor(req));
    res.json(runtimeView(agent));
  });
  router.post('/agents/:name/wake', (req, res) => {
    const owner = ownerOf(req, 'wakes agents');
    const agent = agentOf(db, req);
    const { prompt } = body(WakeBody, req);
    const { kind, run } = requestRun(
      ctx.app,
      { agentId: agent.agentId, source: 'manual', prompt: prompt ?? null, by: `user-${owner.userId}` },
      actor(req),
    );
    res.json({
      run_id: run.runId,
      outcome: kind,
      status: run.status,
      gate: run.gate,
      reason: run.reason,
      queue_reason: run.queueReason,
    });
  });
}
