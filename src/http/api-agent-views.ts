import type { Request } from 'express';
import type { Database } from 'better-sqlite3';
import { COORDINATOR_MODEL, COORDINATOR_NAME } from '../actions/coordinator.js';
import type { Reputation } from '../actions/reputation.js';
import { runtimeSettings } from '../actions/runs/settings.js';
import { notFound } from '../errors.js';
import { sandboxLabel } from '../events/sandbox.js';
import { getAgentByName, type AgentRow } from '../projections/principal-queries.js';
import { getProject } from '../projections/projects.js';
import { runtimeOf, type RunRow } from '../projections/run-queries.js';
import { adapterFor } from '../runtime/adapters/index.js';
import { sandboxView } from '../runtime/sandbox-view.js';
import { AgentName, parse, speakerOf } from './api-common.js';
import { breakerDetail } from '../actions/breakers/view.js';

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
    daily_token_budget: s.dailyTokenBudget,
    max_trigger_depth: s.maxTriggerDepth,
    current_run_id: rt.currentRunId,
    last_run_id: rt.lastRunId,
    last_started_at: rt.lastStartedAt,
    last_finished_at: rt.lastFinishedAt,
    ...sandboxView(rt.sandbox),
    ...breakerDetail(db, agent.agentId),
  };
}

/**
 * What runs the agent, as the runner launches it: its runtime (its own, else its command's, else the
 * team's; null: Colony does not run it), the command line a `command` runtime runs, and the model a CLI
 * runtime is given — null when the CLI is not given one (its own default): a `command` runtime, no
 * runtime, or a model the CLI does not take (`model_problem` says why; adapter-run.ts passes none then —
 * no problem for the pre-built coordinator's placeholder model, as `colony doctor` says).
 */
export function runsWith(agent: AgentRow) {
  const adapter = adapterFor(agent.runtime);
  const placeholder = agent.name === COORDINATOR_NAME && agent.model === COORDINATOR_MODEL;
  const problem = adapter ? adapter.checkModel(agent.model) : null;
  return {
    runtime: agent.runtime,
    runtime_source: agent.ownRuntime !== null ? 'own' : agent.runtime !== null ? 'team' : null,
    command: agent.runtime === 'command' ? agent.command : null,
    command_source: agent.runtime !== 'command' ? null : agent.ownCommand !== null ? 'own' : 'team',
    model: adapter && problem === null ? agent.model : null,
    model_problem: placeholder ? null : problem,
    runnable: agent.runnable,
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
 * any other run shows none yet. Why it did not succeed: `reason` (a refused run's, with the `gate` it
 * stopped at; a failed one's), `cause` (the kind of failure), `limit_hit`, and a timed-out run's
 * `timeout_sec`.
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
    gate: r.gate,
    reason: r.reason,
    limit_hit: r.limitHit,
    timeout_sec: r.timeoutSec,
    sandbox,
  };
}
