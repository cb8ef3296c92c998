import { reputationOf } from '../../actions/reputation.js';
import { invalidInput } from '../../errors.js';
import { readConsistent } from '../../engine/db.js';
import { goalList } from '../../projections/goal-snapshot.js';
import { listAgents } from '../../projections/principal-queries.js';
import { runtimeOf } from '../../projections/run-queries.js';
import type { McpContext } from '../context.js';
import { mayRead, tenantOf } from './access.js';
import { JSON_MIME, MARKDOWN_MIME, type ResourceEntry, type ResourceTemplateEntry } from './types.js';
import { agentUri, goalUri } from './uris.js';
import { type Caller } from '../../events/principals.js';

/**
 * resources/templates/list and resources/list. Templates are fixed (the same for every caller: a
 * template says how to name a resource, not that one exists). The list holds the caller's goals, then
 * its team's agents — only the families its tool scope lets it read (access.ts); runs are reached
 * through their agent or goal, not listed (a busy team has thousands).
 *
 * Goals come newest first, as list_goals orders them, and agents by id: both orders are by immutable
 * ids, so a page boundary never moves because a goal changed status ("open first" would reorder goals
 * between two page requests and skip or repeat some). The cursor is an opaque offset; a goal created
 * while a client pages shifts later pages by one, which repeats an entry and never skips one.
 */
export const PAGE_SIZE = 100;

export const RESOURCE_TEMPLATES: readonly ResourceTemplateEntry[] = Object.freeze([
  {
    uriTemplate: 'colony://goals/{goalId}',
    name: 'goal',
    title: 'Goal',
    mimeType: JSON_MIME,
    description:
      'One goal of your team: status, budgets, spend and their percentages, progress (tasks by status), its agents and cost breakdown. Same data as get_goal without the task tree and channel messages.',
  },
  {
    uriTemplate: 'colony://goals/{goalId}/tree',
    name: 'goal-tree',
    title: 'Goal task tree',
    mimeType: JSON_MIME,
    description:
      'The task tree of one goal: every task with status, assignee, lease, verifier, budgets, spend and subtree rollup, nested by parent.',
  },
  {
    uriTemplate: 'colony://agents/{name}',
    name: 'agent',
    title: 'Agent',
    mimeType: JSON_MIME,
    description:
      'One agent of your team by name: model, autonomy tier, tool scope, quarantine, reputation by domain, runtime status and (if you may read its sessions) its latest runs.',
  },
  {
    uriTemplate: 'colony://runs/{runId}',
    name: 'run',
    title: 'Run',
    mimeType: JSON_MIME,
    description:
      'One run of an agent: why it was woken, its status, gate, timing, exit, usage and output tail. Only runs you may read: yours and those of agents you spawned (the owner: all).',
  },
  {
    uriTemplate: 'colony://runs/{runId}/transcript',
    name: 'run-transcript',
    title: 'Run transcript',
    mimeType: MARKDOWN_MIME,
    description:
      "The transcript of one run's session as session_read shows it (its last 100 messages, each cut at 3000 characters). Same privacy as the run.",
  },
]);

export function listResources(
  ctx: McpContext,
  caller: Caller,
  cursor?: string,
): { resources: ResourceEntry[]; nextCursor?: string } {
  const offset = cursor === undefined ? 0 : offsetOf(cursor);
  const db = ctx.app.engine.db;
  const tenant = tenantOf(caller);
  return readConsistent(db, () => {
    const resources: ResourceEntry[] = [];
    let goalTotal = 0;
    if (mayRead(caller, 'goals')) {
      const page = goalList(db, tenant, { status: null, limit: PAGE_SIZE, offset });
      goalTotal = page.total;
      for (const g of page.goals) resources.push(goalEntry(g));
    }
    const agents = mayRead(caller, 'agents') ? listAgents(db, tenant) : [];
    const agentStart = Math.max(0, offset - goalTotal);
    for (const a of agents.slice(agentStart, agentStart + PAGE_SIZE - resources.length)) {
      const score = reputationOf(ctx.app, a).rollingScore;
      resources.push({
        uri: agentUri(a.name),
        name: `agent-${a.name}`,
        title: a.name,
        mimeType: JSON_MIME,
        description: `${runtimeOf(db, a.agentId).status}, ${a.tier}${a.quarantined ? ', quarantined' : ''}, reputation ${score.toFixed(2)}`,
      });
    }
    const next = offset + resources.length;
    return next < goalTotal + agents.length ? { resources, nextCursor: cursorOf(next) } : { resources };
  });
}

type GoalItem = ReturnType<typeof goalList>['goals'][number];
const goalEntry = (g: GoalItem): ResourceEntry => ({
  uri: goalUri(g.id),
  name: `goal-${g.id}`,
  title: g.title,
  mimeType: JSON_MIME,
  description:
    `${g.status}; ${g.task_count} task(s); spent ${g.spent_tokens} tokens / ${g.spent_dollars_cents}¢` +
    `${g.budget_tokens !== null || g.budget_dollars_cents !== null ? ` of ${g.budget_tokens ?? '∞'} tokens / ${g.budget_dollars_cents ?? '∞'}¢` : ''}`,
});

const cursorOf = (offset: number): string => Buffer.from(`o:${offset}`, 'utf8').toString('base64url');

/** MCP answers a cursor it did not issue with Invalid params: ErrInvalidInput. */
function offsetOf(cursor: string): number {
  const m =
    typeof cursor === 'string' && cursor.length <= 64
      ? /^o:(0|[1-9][0-9]{0,8})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
      : null;
  if (!m)
    throw invalidInput('invalid cursor: pass the nextCursor of the previous resources/list page as it was', {
      cursor: String(cursor).slice(0, 100),
    });
  return Number(m[1]);
}
