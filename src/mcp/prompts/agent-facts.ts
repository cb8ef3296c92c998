import { DomainError } from '../../errors.js';
import { getAgentByName, type AgentRow } from '../../projections/principal-queries.js';
import type { RunRow } from '../../projections/run-queries.js';
import type { TaskRow } from '../../projections/task-queries.js';
import { listTenantTasks } from '../../projections/task-views.js';
import type { McpContext } from '../context.js';
import { tenantOf } from '../resources/access.js';
import { inline } from './quote.js';
import { type Caller } from '../../events/principals.js';

/** What agent-health-check and debug-agent both read about an agent, through the read tools' queries. */

/** An agent of the caller's team by name; another team's agent is as unknown as a missing one. */
export function teamAgent(ctx: McpContext, caller: Caller, prompt: string, name: string): AgentRow {
  const agent = getAgentByName(ctx.app.engine.db, tenantOf(caller), name.trim());
  if (!agent)
    throw new DomainError(
      'ErrNotFound',
      `${prompt}: agent ${JSON.stringify(name.slice(0, 64))} not found in your team`,
      { prompt, agent_name: name.slice(0, 64) },
    );
  return agent;
}

/** The team's claimed and in-progress tasks by assignee (xylocopa's task_list read, 1,000 at most). */
export function openClaims(ctx: McpContext, caller: Caller): Map<number, TaskRow[]> {
  const rows = listTenantTasks(ctx.app.engine.db, {
    ownerId: tenantOf(caller),
    projectId: null,
    statuses: ['claimed', 'in_progress'],
    limit: 1000,
  });
  const out = new Map<number, TaskRow[]>();
  for (const { task } of rows)
    if (task.assigneeAgentId !== null) out.set(task.assigneeAgentId, [...(out.get(task.assigneeAgentId) ?? []), task]);
  return out;
}

export const claimLine = (t: TaskRow): string =>
  `task ${t.taskId} ${inline(t.title, 120)} — ${t.status}, lease until ${t.leaseExpiresAt ?? '?'}, spent ${t.spentTokens} tokens / ${t.spentCents}¢` +
  ` of ${t.budgetTokens ?? '∞'} tokens / ${t.budgetCents ?? '∞'}¢`;

export const FAILED = new Set<RunRow['status']>(['failed', 'timed_out', 'refused']);

export function runLine(r: RunRow): string {
  const why =
    r.status === 'refused'
      ? ` by the ${r.gate} gate: ${inline(r.reason, 200)}`
      : r.status === 'failed'
        ? ` (exit ${r.exitCode ?? r.signal ?? '?'})${r.reason ? `: ${inline(r.reason, 200)}` : ''}`
        : '';
  return (
    `run ${r.runId} (${r.source}${r.taskId !== null ? `, task ${r.taskId}` : ''}) ${r.status}${why} — queued ${r.queuedAt}` +
    `${r.durationMs !== null ? `, ${Math.round(r.durationMs / 100) / 10} s` : ''}, ${r.tokensIn + r.tokensOut + r.reportedTokens} tokens, ${r.costCents + r.reportedCents}¢`
  );
}

export const PRIVATE_RUNS =
  "(private: an agent's runs and transcripts are read only by itself, the agents that spawned it and the owner)";
