import { reputationOf, type Reputation } from '../../actions/reputation.js';
import { runtimeSettings } from '../../actions/runs/settings.js';
import { readConsistent } from '../../engine/db.js';
import { getAgent, getAgentByName } from '../../projections/principal-queries.js';
import { listRuns, runtimeOf } from '../../projections/run-queries.js';
import type { McpContext } from '../context.js';
import { mayReadRunsOf, readableRuns } from '../views/readable.js';
import { resourceNotFound, tenantOf } from './access.js';
import { agentUri, runUri } from './uris.js';
import { type Caller } from '../../events/principals.js';

/**
 * colony://agents/{name}: one agent of the caller's team with its trust (autonomy tier, tool scope,
 * quarantine), reputation now and runtime status — what the console's agent page shows, by the same
 * reads (reputationOf, runtimeOf, runtimeSettings). Never its token or backend command; its system
 * prompt only to the owner and the agent itself, never to a peer, and its latest runs only to those who
 * may read its sessions (views/readable.ts: the owner, itself, the agents that spawned it).
 */
const RUNS_SHOWN = 10;

export function agentResource(ctx: McpContext, caller: Caller, name: string) {
  const db = ctx.app.engine.db;
  return readConsistent(db, () => {
    const agent = getAgentByName(db, tenantOf(caller), name);
    if (!agent) throw resourceNotFound(agentUri(name));
    const rt = runtimeOf(db, agent.agentId);
    const settings = runtimeSettings(db, agent.agentId);
    const self = caller.kind === 'owner' || caller.agentId === agent.agentId;
    const runsVisible = mayReadRunsOf(readableRuns(ctx, caller), agent.agentId);
    return {
      agent: {
        id: agent.agentId,
        name: agent.name,
        model: agent.model,
        autonomy_tier: agent.tier,
        tool_scope: agent.toolScope,
        skills: agent.skills,
        parent: agent.parentId === null ? null : (getAgent(db, agent.parentId)?.name ?? null),
        spawn_depth: agent.spawnDepth,
        config_hash: agent.configHash,
        has_backend: agent.runnable,
        runtime: agent.runtime,
        created_at: agent.createdAt,
        system_prompt: self ? agent.systemPrompt : null,
      },
      trust: {
        autonomy_tier: agent.tier,
        quarantined: agent.quarantined,
        quarantine_reason: agent.quarantineReason,
        quarantined_at: agent.quarantinedAt,
      },
      reputation: reputationView(reputationOf(ctx.app, agent)),
      status: {
        runtime: rt.status,
        stopped: rt.stopped,
        current_run_id: rt.currentRunId,
        last_run_id: rt.lastRunId,
        last_started_at: rt.lastStartedAt,
        last_finished_at: rt.lastFinishedAt,
        daily_run_budget: settings.dailyRunBudget,
        daily_token_budget: settings.dailyTokenBudget,
        timeout_sec: settings.timeoutSec,
      },
      recent_runs: runsVisible
        ? listRuns(db, { agentId: agent.agentId, limit: RUNS_SHOWN }).map((run) => ({
            id: run.runId,
            uri: runUri(run.runId),
            status: run.status,
            task_id: run.taskId,
            queued_at: run.queuedAt,
          }))
        : null,
    };
  });
}

/** Reputation now: the rolling score and, per domain, its score and evidence. */
const reputationView = (r: Reputation) => ({
  rolling_score: r.rollingScore,
  evidence_count: r.evidenceCount,
  last_evidence_at: r.lastEvidenceAt,
  domains: r.domains.map((d) => ({
    domain: d.domain,
    score: d.score,
    evidence_count: d.evidenceCount,
    last_evidence_at: d.lastEvidenceAt,
  })),
});
