import type { Request } from 'express';
import type { Database } from 'better-sqlite3';
import type { Reputation } from '../actions/reputation.js';
import { runtimeSettings } from '../actions/runs/settings.js';
import { notFound } from '../errors.js';
import { sandboxLabel } from '../events/sandbox.js';
import { getAgentByName, type AgentRow } from '../projections/principal-queries.js';
import { getProject } from '../projections/projects.js';
import { runtimeOf, type RunRow } from '../projections/run-queries.js';
import { sandboxView } from '../runtime/sandbox-view.js';
import { AgentName, parse, speakerOf } from './api-common.js';

/** The JSON shapes of the console's agent and run pages (api-agents.ts, api-agent-controls.ts, api-runs.ts). */

/** The agent of the caller's tenant that `:name` names; another tenant's is not found. */
export function agentOf(db: Database, req: Request): AgentRow {
  const name = parse(AgentName, req.params.name, 'name');
  const agent = getAgentByName(db, speakerOf(req).tenant, name);
  if (!agent) throw notFound(`agent ${name}`, { name });
  return agent;
}

/** How the agent runs now: its settings with the team's defaults filled in, and its confinement. */
export function runtimeDetail(db: Database, agent: AgentRow) {
  const rt = runtimeOf(db, agent.agentId);
  const s = runtimeSettings(db, agent.agentId);
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
    ...sandboxView(rt.sandbox),
  };
}

export const reputationDomains = (r: Reputation) =>
  r.domains.map((d) => ({
    domain: d.domain,
    score: d.score,
    evidence_count: d.evidenceCount,
    last_evidence_at: d.lastEvidenceAt,
  }));

/**
 * One run in a list. Its sandbox is the confinement it runs under, once recorded; without one, a run
 * that started and finished ran before Colony confined runs ("unconfined (before confinement)"), and
 * any other run shows none yet.
 */
export function runSummary(r: RunRow) {
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
    cost_known: r.costKnown,
    billing_lane: r.billingLane,
    runtime: r.runtime,
    cause: r.cause,
    reason: r.status === 'failed' ? r.reason : null,
    limit_hit: r.limitHit,
    sandbox,
  };
}
