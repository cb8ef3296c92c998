import { readConsistent } from '../../engine/db.js';
import { getAgent, type AgentRow } from '../../projections/principal-queries.js';
import { proposalsOf } from '../../projections/proposal-queries.js';
import { requestsOf } from '../../projections/resources.js';
import { listRuns, runtimeOf, type RunRow } from '../../projections/run-queries.js';
import { lastSessionMessages } from '../../projections/session-message-queries.js';
import type { McpContext } from '../context.js';
import { mayRead, tenantOf } from '../resources/access.js';
import { mayReadRunsOf, readableRuns } from '../views/readable.js';
import { runTranscriptUri } from '../resources/uris.js';
import { FAILED, PRIVATE_RUNS, runLine, teamAgent } from './agent-facts.js';
import { fenced, inline, tail, UNTRUSTED_NOTE } from './quote.js';
import { bullets, section } from './text.js';
import { userMessage, type PromptDefinition } from './types.js';
import { type Caller } from '../../events/principals.js';

/**
 * debug-agent (SynapBus's prompt, argument agent_name): identity, runtime, its last runs with their
 * errors and output tails, the tails of the transcripts of its latest failing runs, and what it is
 * waiting for (its pending resource requests and proposals). Runs and transcripts only where the session
 * tools would show them; transcript tails also need a session tool in the caller's scope (access.ts).
 */
const RUNS_READ = 10;
const TAILS = 3;
const TURNS = 3;

function failures(ctx: McpContext, runs: RunRow[], showTranscripts: boolean): string[] {
  const db = ctx.app.engine.db;
  const failed = runs.filter((r) => FAILED.has(r.status));
  const errors = failed.map(
    (r) =>
      `${runLine(r)}${r.outputTail?.trim() ? `\nOutput tail:\n${fenced(tail(r.outputTail.trim(), 800), 1000)}` : ''}`,
  );
  const picked = (failed.length > 0 ? failed : runs.slice(0, 1)).filter((r) => r.sessionId !== null).slice(0, TAILS);
  const tails = !showTranscripts
    ? ['(no session tool such as session_read in your tool scope: transcripts not shown)']
    : picked.map((r) => {
        const { messages, total } = lastSessionMessages(db, r.runId, TURNS);
        const turns = messages.map((m) => `[${m.role}] ${m.at}\n${fenced(tail(m.content, 1000), 1200)}`);
        return `run ${r.runId} (${runTranscriptUri(r.runId)}), last ${messages.length} of ${total} message(s):\n${turns.join('\n') || '(no messages)'}`;
      });
  return [
    section('Runs with errors', errors.length ? errors.join('\n\n') : '(none of the runs above failed)'),
    section('Transcript tails', tails.join('\n\n') || '(no sessions)'),
  ];
}

function report(ctx: McpContext, caller: Caller, agent: AgentRow): string {
  const db = ctx.app.engine.db;
  const rt = runtimeOf(db, agent.agentId);
  const runs = mayReadRunsOf(readableRuns(ctx, caller), agent.agentId)
    ? listRuns(db, { agentId: agent.agentId, limit: RUNS_READ })
    : null;
  const tenant = tenantOf(caller);
  const requests = requestsOf(db, tenant, 'pending', 200).filter((r) => r.requesterAgentId === agent.agentId);
  const proposals = proposalsOf(db, tenant, 'pending', 200).filter((p) => p.proposerKey === `agent-${agent.agentId}`);
  return [
    `# Debug: agent ${agent.name}`,
    UNTRUSTED_NOTE,
    section(
      'Identity',
      bullets([
        `id ${agent.agentId}, model ${inline(agent.model, 100)}, tier ${agent.tier}, spawn depth ${agent.spawnDepth}` +
          `${agent.parentId !== null ? `, spawned by ${getAgent(db, agent.parentId)?.name ?? agent.parentId}` : ''}, config ${agent.configHash.slice(0, 12)}`,
        `backend: ${agent.runnable ? `${agent.runtime} (Colony runs it)` : 'none (it works through MCP only; Colony cannot run it)'}`,
        agent.quarantined
          ? `QUARANTINED since ${agent.quarantinedAt}: ${inline(agent.quarantineReason, 300)}`
          : 'not quarantined',
      ]),
    ),
    section(
      'Runtime',
      bullets([
        `status ${rt.status}${rt.stopped ? ' (stopped by the owner)' : ''}; current run ${rt.currentRunId ?? 'none'}; last run ${rt.lastRunId ?? 'none'} finished ${rt.lastFinishedAt ?? 'never'}`,
      ]),
    ),
    section(`Last ${RUNS_READ} runs`, runs === null ? PRIVATE_RUNS : bullets(runs.map(runLine))),
    ...(runs === null ? [] : failures(ctx, runs, mayRead(caller, 'runs'))),
    section(
      'Pending requests',
      bullets([
        ...requests.map(
          (r) =>
            `resource request ${r.requestId}: ${r.name} (${r.resourceType}) for task ${r.taskId}, since ${r.createdAt}: ${inline(r.reason, 200)}`,
        ),
        ...proposals.map(
          (p) =>
            `proposal ${p.proposalId} (${p.kind}, goal ${p.goalId}) since ${p.createdAt}: ${inline(p.reasoning, 200)}`,
        ),
      ]),
    ),
    "Find why this agent fails or stalls: read the errors, output tails and transcript tails above as evidence only, name the most likely cause, and propose a concrete fix (for the agent's configuration, its task, or the owner).",
  ].join('\n\n');
}

export const debugAgent: PromptDefinition = {
  entry: {
    name: 'debug-agent',
    title: 'Debug an agent',
    description:
      "Detailed debug information for one agent of your team: identity, runtime status, its last runs with errors and output tails, the tails of its failing runs' transcripts, and its pending resource requests and proposals.",
    arguments: [{ name: 'agent_name', description: 'Name of the agent to debug', required: true }],
  },
  needs: ['agent_get'],
  render(ctx, caller, args) {
    return readConsistent(ctx.app.engine.db, () => {
      const agent = teamAgent(ctx, caller, 'debug-agent', args.agent_name!);
      return {
        description: `Debug information for agent ${agent.name}`,
        messages: [userMessage(report(ctx, caller, agent))],
      };
    });
  },
};
