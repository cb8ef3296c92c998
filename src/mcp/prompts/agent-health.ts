import { reputationOf } from '../../actions/reputation.js';
import { runtimeSettings } from '../../actions/runs/settings.js';
import { readConsistent } from '../../engine/db.js';
import { listAgents, type AgentRow } from '../../projections/principal-queries.js';
import { listRuns, runsStartedSince, runtimeOf } from '../../projections/run-queries.js';
import type { McpContext } from '../context.js';
import { tenantOf } from '../resources/access.js';
import { mayReadRunsOf, readableRuns } from '../views/readable.js';
import { claimLine, FAILED, openClaims, PRIVATE_RUNS, runLine, teamAgent } from './agent-facts.js';
import { inline, UNTRUSTED_NOTE } from './quote.js';
import { bullets, section } from './text.js';
import { userMessage, type PromptDefinition } from './types.js';
import { type Caller } from '../../events/principals.js';

/**
 * agent-health-check (SynapBus's prompt): with no argument, as upstream, every agent of the team in one
 * table — status, quarantine, reputation, open claims, last run — with those needing attention flagged;
 * with agent_name, that agent in detail: status, reputation by domain, recent runs and failures, open
 * claims and budget. Runs show only where the session tools would show them (access.ts).
 */
const RUNS_READ = 20;

function teamTable(ctx: McpContext, caller: Caller): string {
  const db = ctx.app.engine.db;
  const readable = readableRuns(ctx, caller);
  const claims = openClaims(ctx, caller);
  const rows = listAgents(db, tenantOf(caller)).map((a) => {
    const score = reputationOf(ctx.app, a).rollingScore;
    const last = mayReadRunsOf(readable, a.agentId) ? listRuns(db, { agentId: a.agentId, limit: 1 })[0] : undefined;
    const lastText = mayReadRunsOf(readable, a.agentId)
      ? last
        ? `${last.runId} ${last.status}`
        : 'never ran'
      : 'private';
    const status = runtimeOf(db, a.agentId).status;
    const attention =
      a.quarantined || status === 'error' || (last !== undefined && FAILED.has(last.status))
        ? '**NEEDS ATTENTION**'
        : '';
    return `| ${a.name} | ${status} | ${a.tier} | ${a.quarantined ? 'yes' : 'no'} | ${score.toFixed(2)} | ${claims.get(a.agentId)?.length ?? 0} | ${lastText} | ${attention} |`;
  });
  return [
    '# Agent health check',
    '| Agent | Status | Tier | Quarantined | Reputation | Open claims | Last run | Notes |',
    '|---|---|---|---|---|---|---|---|',
    ...(rows.length ? rows : ['| (no agents) | | | | | | | |']),
    `\n*Total agents: ${rows.length}*`,
    "Assess the team from this table: which agents need the owner's attention and why, and one action for each.",
  ].join('\n');
}

function oneAgent(ctx: McpContext, caller: Caller, agent: AgentRow): string {
  const db = ctx.app.engine.db;
  const rt = runtimeOf(db, agent.agentId);
  const rep = reputationOf(ctx.app, agent);
  const settings = runtimeSettings(db, agent.agentId);
  const dayAgo = new Date(ctx.app.engine.clock().getTime() - 24 * 3600 * 1000).toISOString();
  const runs = mayReadRunsOf(readableRuns(ctx, caller), agent.agentId)
    ? listRuns(db, { agentId: agent.agentId, limit: RUNS_READ })
    : null;
  const claims = openClaims(ctx, caller).get(agent.agentId) ?? [];
  return [
    `# Agent health check: ${agent.name}`,
    UNTRUSTED_NOTE,
    section(
      'Status',
      bullets([
        `runtime: ${rt.status}${rt.stopped ? ' (stopped by the owner)' : ''}; current run ${rt.currentRunId ?? 'none'}, last finished ${rt.lastFinishedAt ?? 'never'}`,
        `trust: autonomy tier ${agent.tier}; ${agent.quarantined ? `QUARANTINED since ${agent.quarantinedAt}: ${inline(agent.quarantineReason, 300)}` : 'not quarantined'}`,
        `model ${inline(agent.model, 100)}, spawn depth ${agent.spawnDepth}, config ${agent.configHash.slice(0, 12)}`,
      ]),
    ),
    section(
      'Reputation',
      bullets([
        `rolling score ${rep.rollingScore.toFixed(3)} over ${rep.evidenceCount} evidence(s), last ${rep.lastEvidenceAt ?? 'never'}`,
        ...rep.domains.map(
          (d) => `domain ${inline(d.domain, 64)}: ${d.score.toFixed(3)} (${d.evidenceCount} evidence(s))`,
        ),
      ]),
    ),
    section(
      `Recent runs (last ${RUNS_READ})`,
      runs === null
        ? PRIVATE_RUNS
        : `${runs.length} run(s), ${runs.filter((r) => FAILED.has(r.status)).length} failed, timed out or refused\n${bullets(runs.map(runLine))}`,
    ),
    section('Open claims', bullets(claims.map(claimLine))),
    section(
      'Budget',
      bullets([
        `daily run budget ${settings.dailyRunBudget ?? 'unlimited'}; runs started in the last 24 h: ${runsStartedSince(db, agent.agentId, dayAgo)}`,
        ...(runs
          ? [
              `spent by the runs above: ${runs.reduce((n, r) => n + r.tokensIn + r.tokensOut + r.reportedTokens, 0)} tokens, ${runs.reduce((n, r) => n + r.costCents + r.reportedCents, 0)}¢`,
            ]
          : []),
      ]),
    ),
    "Assess this agent's health: is it working, failing, stuck on a claim, or near a budget? Say what the owner should do, if anything.",
  ].join('\n\n');
}

export const agentHealthCheck: PromptDefinition = {
  entry: {
    name: 'agent-health-check',
    title: 'Agent health check',
    description:
      "The health of your team's agents: without agent_name a table of every agent (status, quarantine, reputation, open claims, last run) flagging those needing attention; with agent_name that agent in detail — status, reputation, recent runs and failures, open claims, budget.",
    arguments: [
      { name: 'agent_name', description: 'One agent to check in detail (default: the whole team)', required: false },
    ],
  },
  needs: ['agent_get'],
  render(ctx, caller, args) {
    const name = args.agent_name?.trim();
    return readConsistent(ctx.app.engine.db, () => {
      if (!name)
        return { description: 'Status of every agent of the team', messages: [userMessage(teamTable(ctx, caller))] };
      const agent = teamAgent(ctx, caller, 'agent-health-check', name);
      return { description: `Health of agent ${agent.name}`, messages: [userMessage(oneAgent(ctx, caller, agent))] };
    });
  },
};
