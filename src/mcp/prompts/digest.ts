import type { Database } from 'better-sqlite3';
import { readConsistent } from '../../engine/db.js';
import { invalidInput } from '../../errors.js';
import { channelMessages } from '../../projections/channel-queries.js';
import { goalList } from '../../projections/goal-snapshot.js';
import { getUser, listAgents } from '../../projections/principal-queries.js';
import { proposalsOf } from '../../projections/proposal-queries.js';
import { requestsOf } from '../../projections/resources.js';
import { listTenantTasks } from '../../projections/task-views.js';
import type { McpContext } from '../context.js';
import { tenantOf } from '../resources/access.js';
import { inline, UNTRUSTED_NOTE } from './quote.js';
import { bullets, section } from './text.js';
import { userMessage, type PromptDefinition } from './types.js';
import { type Caller } from '../../events/principals.js';

/**
 * daily-digest (SynapBus's prompt, on Colony's data): what happened in the caller's team since `since`
 * (default: 24 hours ago) — goals created and closed, tasks done and failed, what waits for approval,
 * budget alerts and pauses, quarantined agents. Read through the list reads the tools and console use,
 * each bounded: the latest 200 goals (list_goals' cap), 1,000 finished tasks, 50 pending items.
 */
const DAY_MS = 24 * 60 * 60 * 1000;
const ALERTS = new Set(['BudgetAlertRaised', 'GoalPaused', 'TaskBudgetAlertRaised']);

function sinceOf(ctx: McpContext, raw: string | undefined): string {
  if (raw === undefined || raw.trim() === '') return new Date(ctx.app.engine.clock().getTime() - DAY_MS).toISOString();
  const t = Date.parse(raw);
  if (Number.isNaN(t))
    throw invalidInput(
      `daily-digest: argument since must be an ISO 8601 time such as 2026-03-01T09:00:00Z, got ${JSON.stringify(raw.slice(0, 50))}`,
      { argument: 'since' },
    );
  return new Date(t).toISOString();
}

function digest(ctx: McpContext, caller: Caller, since: string): string {
  const db = ctx.app.engine.db;
  const tenant = tenantOf(caller);
  const after = (at: string | null | undefined): boolean => at !== null && at !== undefined && at >= since;
  const goals = goalList(db, tenant, { status: null, limit: 200, offset: 0 }).goals;
  const finished = finishedTasks(db, tenant, after);
  const alerts = goals
    .filter((g) => after(g.last_activity_at))
    .flatMap((g) =>
      channelMessages(db, g.channel_id, 200, null)
        .filter((m) => m.kind === 'system' && ALERTS.has(String(m.metadata?.event)) && after(m.createdAt))
        .map(
          (m) =>
            `${m.createdAt} ${titled(g)}: ${String(m.metadata?.event)} — ${String(m.metadata?.dimension ?? '?')} at ${String(m.metadata?.percent ?? '?')} % (${String(m.metadata?.spent ?? '?')} of ${String(m.metadata?.budget ?? '?')})`,
        ),
    );
  const quarantined = listAgents(db, tenant).filter((a) => a.quarantined);
  return [
    `# Colony daily digest — team of ${getUser(db, tenant)?.name ?? tenant}`,
    `Period: ${since} to ${ctx.app.engine.clock().toISOString()}`,
    UNTRUSTED_NOTE,
    section(
      'Goals created',
      bullets(
        goals
          .filter((g) => after(g.created_at))
          .map(
            (g) =>
              `${titled(g)} — ${g.status}, budget ${g.budget_tokens ?? '∞'} tokens / ${g.budget_dollars_cents ?? '∞'}¢`,
          ),
      ),
    ),
    section(
      'Goals closed',
      bullets(
        goals
          .filter((g) => after(g.completed_at))
          .map((g) => `${titled(g)} — ${g.status}: ${inline(g.completion_summary, 300)}`),
      ),
    ),
    section('Tasks done', bullets(finished.filter((t) => t.status === 'done').map(taskLine))),
    section('Tasks failed or timed out', bullets(finished.filter((t) => t.status !== 'done').map(taskLine))),
    section('Waiting for approval', bullets(waiting(db, tenant))),
    section('Budget alerts and pauses', bullets(alerts)),
    section(
      'Goals paused now',
      bullets(goals.filter((g) => g.status === 'paused').map((g) => `${titled(g)}: ${inline(g.paused_reason, 200)}`)),
    ),
    section(
      'Agents quarantined',
      bullets(
        quarantined.map(
          (a) =>
            `${a.name} since ${a.quarantinedAt ?? '?'}${after(a.quarantinedAt) ? ' (new in this period)' : ''}: ${inline(a.quarantineReason, 200)}`,
        ),
      ),
    ),
    'Write a short digest for the owner from these facts: lead with what needs a decision (approvals, paused goals, quarantined agents), then what failed and why, then what got done. Cite ids.',
  ].join('\n\n');
}

const titled = (g: { id: number; title: string }) => `goal ${g.id} ${inline(g.title, 120)}`;

/** The tenant's tasks that ended in the period: done, failed or timed out (the latest 1,000 of them). */
function finishedTasks(db: Database, tenant: number, after: (at: string | null | undefined) => boolean) {
  return listTenantTasks(db, { ownerId: tenant, projectId: null, statuses: ['done', 'failed', 'timeout'], limit: 1000 })
    .map((r) => r.task)
    .filter((t) => after(t.completedAt ?? t.updatedAt));
}

const taskLine = (t: ReturnType<typeof finishedTasks>[number]) =>
  `task ${t.taskId} ${inline(t.title, 120)}${t.goalId !== null ? ` (goal ${t.goalId})` : ''}` +
  `${t.assigneeName ? ` by ${t.assigneeName}` : ''}${t.status !== 'done' ? ` — ${t.status}: ${inline(t.failureReason, 300)}` : ''}`;

/** What waits for the owner's decision: pending proposals and resource requests, 50 of each. */
function waiting(db: Database, tenant: number): string[] {
  return [
    ...proposalsOf(db, tenant, 'pending', 50).map(
      (p) =>
        `proposal ${p.proposalId} (${p.kind === 'task_tree' ? `task tree of ${p.taskCount} task(s)` : 'new agent'}, goal ${p.goalId}) by ${p.proposerName}: ${inline(p.reasoning, 200)}`,
    ),
    ...requestsOf(db, tenant, 'pending', 50).map(
      (r) =>
        `resource request ${r.requestId}: ${r.name} (${r.resourceType}) for task ${r.taskId} by ${r.requesterName}: ${inline(r.reason, 200)}`,
    ),
  ];
}

export const dailyDigest: PromptDefinition = {
  entry: {
    name: 'daily-digest',
    title: 'Daily digest',
    description:
      'What happened in your team in the last 24 hours (or since a time you give): goals created and closed, tasks done and failed, approvals waiting, budget alerts, quarantined agents.',
    arguments: [
      {
        name: 'since',
        description: 'ISO 8601 time to report from, e.g. 2026-03-01T09:00:00Z (default: 24 hours ago)',
        required: false,
      },
    ],
  },
  needs: ['list_goals'],
  render(ctx, caller, args) {
    const since = sinceOf(ctx, args.since);
    return {
      description: `Colony activity since ${since}`,
      messages: [userMessage(readConsistent(ctx.app.engine.db, () => digest(ctx, caller, since)))],
    };
  },
};
