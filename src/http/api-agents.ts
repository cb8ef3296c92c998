import type { Request, Router } from 'express';
import { reputationOf } from '../actions/reputation.js';
import { DomainError } from '../errors.js';
import type { McpContext } from '../mcp/context.js';
import { getAgent, listAgents } from '../projections/principal-queries.js';
import { listRuns, runtimeOf } from '../projections/run-queries.js';
import { agentOf, reputationDomains, runSummary, runsWith, runtimeDetail } from './api-agent-views.js';
import { callerOf, Id, parse, speakerOf } from './api-common.js';
import { latestEvidence } from '../projections/reputation.js';

/**
 * Agents in the console: the team's agents and what runs each (`runs_with`), one agent in detail (config,
 * runtime and confinement, reputation with its latest evidence, its latest runs) and an agent's reputation
 * by id. A system prompt is shown to the owner and the agent itself only. One run with its transcript:
 * api-runs.ts; the owner's controls (unquarantine, stop, start, wake): api-agent-controls.ts.
 */
const RUNS_SHOWN = 50;
const EVIDENCE_SHOWN = 200;

export function mountAgents(router: Router, ctx: McpContext): void {
  const db = ctx.app.engine.db;
  router.get('/agents', (req, res) => {
    const agents = listAgents(db, speakerOf(req).tenant);
    const names = new Map(agents.map((a) => [a.agentId, a.name]));
    res.json({
      agents: agents.map((a) => ({
        id: a.agentId,
        name: a.name,
        model: a.model,
        runs_with: runsWith(a),
        tier: a.tier,
        status: runtimeOf(db, a.agentId).status,
        quarantined: a.quarantined,
        parent_id: a.parentId,
        parent: a.parentId === null ? null : (names.get(a.parentId) ?? null),
        spawn_depth: a.spawnDepth,
        config_hash: a.configHash,
        rolling_score: reputationOf(ctx.app, a).rollingScore,
      })),
    });
  });

  router.get('/agents/:name', (req, res) => {
    res.json(agentDetail(ctx, req));
  });

  router.get('/agents/:id/reputation', (req, res) => {
    const id = parse(Id, req.params.id, 'id');
    const agent = getAgent(db, id);
    if (!agent || agent.ownerId !== speakerOf(req).tenant)
      throw new DomainError('ErrNotFound', `agent ${id} not found`, { agent_id: id });
    const r = reputationOf(ctx.app, agent);
    res.json({
      config_hash: r.configHash,
      rolling_score: r.rollingScore,
      evidence_count: r.evidenceCount,
      last_evidence_at: r.lastEvidenceAt,
      quarantined: r.quarantined,
      domains: reputationDomains(r),
    });
  });
}

/** One agent in detail, as the console's agent page shows it. */
function agentDetail(ctx: McpContext, req: Request) {
  const db = ctx.app.engine.db;
  const agent = agentOf(db, req);
  const caller = callerOf(req);
  const mayReadPrompt = caller.kind === 'owner' || caller.agentId === agent.agentId;
  const r = reputationOf(ctx.app, agent);
  return {
    agent: {
      id: agent.agentId,
      name: agent.name,
      model: agent.model,
      tier: agent.tier,
      tool_scope: agent.toolScope,
      skills: agent.skills,
      parent: agent.parentId === null ? null : (getAgent(db, agent.parentId)?.name ?? null),
      parent_id: agent.parentId,
      spawn_depth: agent.spawnDepth,
      config_hash: agent.configHash,
      quarantined: agent.quarantined,
      quarantine_reason: agent.quarantineReason,
      quarantined_at: agent.quarantinedAt,
      command: agent.command,
      runs_with: runsWith(agent),
      system_prompt: mayReadPrompt ? agent.systemPrompt : null,
      created_at: agent.createdAt,
      runtime: runtimeDetail(db, agent),
    },
    reputation: {
      rolling_score: r.rollingScore,
      evidence_count: r.evidenceCount,
      last_evidence_at: r.lastEvidenceAt,
      domains: reputationDomains(r),
      evidence: latestEvidence(db, agent.ownerId, agent.configHash, EVIDENCE_SHOWN),
    },
    runs: listRuns(db, { agentId: agent.agentId, limit: RUNS_SHOWN }).map(runSummary),
  };
}
