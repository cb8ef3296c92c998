import type { Request, Router } from 'express';
import * as z from 'zod';
import { startAgent, stopAgent } from '../actions/runs/agent-controls.js';
import { reputationOf, unquarantineAgent } from '../actions/reputation.js';
import { requestRun } from '../actions/runs.js';
import { DomainError, notFound } from '../errors.js';
import { sandboxLabel } from '../events/sandbox.js';
import type { McpContext } from '../mcp/context.js';
import type { ToolContext } from '../mcp/tool.js';
import { readableBy } from '../mcp/tools/sessions.js';
import { getAgent, getAgentByName, listAgents, type AgentRow } from '../projections/principals.js';
import { getProject } from '../projections/projects.js';
import { getRun, listRuns, runtimeOf, sessionMessages, type RunRow } from '../projections/run-queries.js';
import { runtimeSettings } from '../actions/runs/settings.js';
import { effectiveSandbox } from '../runtime/confine.js';
import { actor, AgentName, body, callerOf, Id, ownerOf, parse, speakerOf } from './api-common.js';
import { latestEvidence } from './api-queries.js';

/**
 * Agents in the console: the team's agents, one agent in detail (config, runtime and confinement,
 * reputation with its latest evidence, its latest runs), an agent's reputation by id (seed 000), one
 * run with its transcript — only for those who may read that agent's sessions (mcp/tools/sessions.ts
 * readableBy: the owner; an agent itself and the agents it spawned), everyone else gets 404 — and the
 * owner's controls: unquarantine, stop, start, wake. A system prompt is shown to the owner and the
 * agent itself only.
 */
const StopBody = z.strictObject({ reason: z.string().trim().min(1).max(2000).optional() });
const WakeBody = z.strictObject({ prompt: z.string().trim().min(1).max(16_000).optional() });
const RUNS_SHOWN = 50;
const EVIDENCE_SHOWN = 200;

export function mountAgents(router: Router, ctx: McpContext): void {
  const db = ctx.app.engine.db;
  const agentOf = (req: Request): AgentRow => {
    const name = parse(AgentName, req.params.name, 'name');
    const agent = getAgentByName(db, speakerOf(req).tenant, name);
    if (!agent) throw notFound(`agent ${name}`, { name });
    return agent;
  };
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

  router.get('/agents', (req, res) => {
    const agents = listAgents(db, speakerOf(req).tenant);
    const names = new Map(agents.map((a) => [a.agentId, a.name]));
    res.json({
      agents: agents.map((a) => ({
        id: a.agentId,
        name: a.name,
        model: a.model,
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
    const agent = agentOf(req);
    const caller = callerOf(req);
    const mayReadPrompt = caller.kind === 'owner' || caller.agentId === agent.agentId;
    const r = reputationOf(ctx.app, agent);
    res.json({
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
        system_prompt: mayReadPrompt ? agent.systemPrompt : null,
        created_at: agent.createdAt,
        runtime: runtimeDetail(agent),
      },
      reputation: {
        rolling_score: r.rollingScore,
        evidence_count: r.evidenceCount,
        last_evidence_at: r.lastEvidenceAt,
        domains: r.domains.map((d) => ({
          domain: d.domain,
          score: d.score,
          evidence_count: d.evidenceCount,
          last_evidence_at: d.lastEvidenceAt,
        })),
        evidence: latestEvidence(db, agent.ownerId, agent.configHash, EVIDENCE_SHOWN),
      },
      runs: listRuns(db, { agentId: agent.agentId, limit: RUNS_SHOWN }).map(runSummary),
    });
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
      domains: r.domains.map((d) => ({
        domain: d.domain,
        score: d.score,
        evidence_count: d.evidenceCount,
        last_evidence_at: d.lastEvidenceAt,
      })),
    });
  });

  router.get('/runs/:id', (req, res) => {
    const id = parse(Id, req.params.id, 'id');
    const caller = callerOf(req);
    const run = getRun(db, id);
    const readable = readableBy({ app: ctx.app, caller } as ToolContext);
    if (!run || run.ownerId !== speakerOf(req).tenant || (readable !== null && !readable.includes(run.agentId))) {
      throw new DomainError('ErrNotFound', `run ${id} not found`, { run_id: id });
    }
    res.json({
      run: {
        ...runSummary(run),
        agent_id: run.agentId,
        agent: getAgent(db, run.agentId)?.name ?? null,
        session_id: run.sessionId,
        depth: run.depth,
        gate: run.gate,
        reason: run.reason,
        queue_reason: run.queueReason,
        queued_at: run.queuedAt,
        finished_at: run.finishedAt,
        config_hash: run.configHash,
        timeout_sec: run.timeoutSec,
        timed_out: run.timedOut,
        exit_code: run.exitCode,
        signal: run.signal,
        output_tail: run.outputTail,
        trace_id: run.traceId,
        wakes: run.wakes.map((w) => ({ source: w.source, by: w.by, prompt: w.prompt, message_ids: w.messageIds })),
      },
      transcript: sessionMessages(db, run.runId).map((m) => ({
        seq: m.seq,
        role: m.role,
        at: m.at,
        content: m.content,
        truncated: m.truncated,
      })),
    });
  });

  router.post('/agents/:name/unquarantine', (req, res) => {
    const owner = ownerOf(req, 'lifts quarantines');
    const agent = agentOf(req);
    body(z.strictObject({}), req);
    unquarantineAgent(ctx.app, owner.userId, agent.agentId, `user:${owner.name}`, actor(req));
    res.json(runtimeView(agent));
  });
  router.post('/agents/:name/stop', (req, res) => {
    const owner = ownerOf(req, 'stops agents');
    const agent = agentOf(req);
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
    const agent = agentOf(req);
    body(z.strictObject({}), req);
    startAgent(ctx.app, owner.userId, agent.agentId, `user-${owner.userId}`, actor(req));
    res.json(runtimeView(agent));
  });
  router.post('/agents/:name/wake', (req, res) => {
    const owner = ownerOf(req, 'wakes agents');
    const agent = agentOf(req);
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

  function runtimeDetail(agent: AgentRow) {
    const rt = runtimeOf(db, agent.agentId);
    const s = runtimeSettings(db, agent.agentId);
    const box = effectiveSandbox(rt.sandbox);
    return {
      status: rt.status,
      stopped: rt.stopped,
      project: rt.projectId === null ? null : (getProject(db, rt.projectId)?.name ?? null),
      timeout_sec: s.timeoutSec,
      cooldown_sec: s.cooldownSec,
      daily_run_budget: s.dailyRunBudget,
      max_trigger_depth: s.maxTriggerDepth,
      current_run_id: rt.currentRunId,
      last_run_id: rt.lastRunId,
      last_started_at: rt.lastStartedAt,
      last_finished_at: rt.lastFinishedAt,
      sandbox: box.sandbox,
      network: box.network,
      allow_hosts: box.allowHosts,
      memory_mb: box.limits.memoryMb,
      cpu_sec: box.limits.cpuSec,
      pids: box.limits.pids,
      file_size_mb: box.limits.fileMb,
    };
  }
}

function runSummary(r: RunRow) {
  const sandbox = r.sandbox ? sandboxLabel(r.sandbox) : r.finishedAt && r.startedAt ? sandboxLabel(null) : null;
  return {
    id: r.runId,
    source: r.source,
    status: r.status,
    task_id: r.taskId,
    goal_id: r.goalId,
    started_at: r.startedAt,
    duration_ms: r.durationMs,
    tokens_in: r.tokensIn,
    tokens_out: r.tokensOut,
    cost_cents: r.costCents,
    limit_hit: r.limitHit,
    sandbox,
  };
}
