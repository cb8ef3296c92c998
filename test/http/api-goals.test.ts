import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createOwner } from '../../src/actions/principals.js';
import { tasksOfGoal } from '../../src/projections/task-queries.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { ok } from '../helpers/calls.js';

/**
 * /api/goals over real sockets: the list, one goal's snapshot and resuming a paused goal, with bearer
 * owner tokens only (agent tokens 403, none 401), JSON errors and tenant isolation. The goals are made
 * through real MCP clients on the same server.
 */
type Body = Record<string, unknown>;
let f: HttpFixture;
let owner: Client;
let worker: Client;
let otherToken: string;

const DESCRIPTION = 'Keep every page of the documentation site accurate against the code.';
const leaf = (title: string): Body => ({ title, description: `${title}: the work to do here.` });

function api(path: string, init: { method?: string; token?: string | null; body?: unknown; raw?: string } = {}) {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? f.ownerToken : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (init.raw !== undefined || init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = init.raw ?? JSON.stringify(init.body);
  }
  return fetch(`${f.base}/api${path}`, { method: init.method ?? 'GET', headers, body });
}

/** A request expected to fail with `status` and a JSON `{error: {code}}`, appending nothing. */
async function apiError(
  path: string,
  status: number,
  code: string,
  init: Parameters<typeof api>[1] = {},
): Promise<Body> {
  const before = f.eventCount();
  const res = await api(path, init);
  assert.equal(res.status, status, `${init.method ?? 'GET'} ${path}`);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, code, JSON.stringify(body));
  assert.ok(body.error.message.length > 0);
  assert.equal(f.eventCount(), before, `${path}: nothing appended`);
  return body;
}

async function approvedGoal(title: string, budgetCents?: number): Promise<{ goalId: number; taskId: number }> {
  const g = await ok(owner, 'create_goal', {
    title,
    description: DESCRIPTION,
    ...(budgetCents === undefined ? {} : { budget_dollars_cents: budgetCents }),
  });
  const p = await ok(owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: { ...leaf('Root task'), children: [leaf('Leaf task')] },
  });
  await ok(owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' });
  const tasks = tasksOfGoal(f.app.engine.db, g.goal_id as number);
  return { goalId: g.goal_id as number, taskId: tasks.at(-1)!.taskId };
}

let draftId: number;
let activeId: number;
let pausedId: number;
let theirsId: number;

before(async () => {
  f = await httpFixture({ agentTools: ['claim_task', 'report_usage', 'get_goal'] });
  owner = await f.connect(f.ownerToken);
  worker = await f.connect(f.agentToken);
  otherToken = createOwner(f.app, 'other-owner', { actor: 'system' }).token;
  const other = await f.connect(otherToken);

  draftId = (await ok(owner, 'create_goal', { title: 'A draft goal', description: DESCRIPTION })).goal_id as number;
  activeId = (await approvedGoal('An active goal')).goalId;
  const paused = await approvedGoal('A goal that runs out of money', 100);
  pausedId = paused.goalId;
  await ok(worker, 'claim_task', { task_id: paused.taskId });
  const usage = await ok(worker, 'report_usage', { task_id: paused.taskId, tokens: 500, cost_cents: 100 });
  assert.equal(usage.goal_status, 'paused', 'spending the whole budget pauses the goal');
  theirsId = (await ok(other, 'create_goal', { title: 'Another tenant goal', description: DESCRIPTION }))
    .goal_id as number;
});
after(() => f.close());

describe('GET /api/goals', () => {
  it("lists the caller's goals newest first with cost totals and task counts", async () => {
    const res = await api('/goals');
    assert.equal(res.status, 200);
    const body = (await res.json()) as { goals: Body[]; total: number; limit: number; offset: number };
    assert.deepEqual([body.total, body.limit, body.offset], [3, 50, 0]);
    assert.deepEqual(
      body.goals.map((g) => g.id),
      [pausedId, activeId, draftId],
    );
    for (const g of body.goals) {
      for (const k of [
        'id',
        'slug',
        'title',
        'status',
        'owner_user_id',
        'channel_id',
        'cost_totals',
        'task_count',
        'last_activity_at',
      ])
        assert.ok(k in g, `${k} in ${JSON.stringify(g)}`);
    }
    const [paused, active, draft] = body.goals;
    assert.deepEqual([paused!.status, active!.status, draft!.status], ['paused', 'active', 'draft']);
    assert.deepEqual(paused!.cost_totals, { tokens: 500, dollars_cents: 100 });
    assert.deepEqual([paused!.task_count, active!.task_count, draft!.task_count], [2, 2, 0]);
    assert.equal(paused!.slug, 'a-goal-that-runs-out-of-money');
    assert.equal(paused!.budget_dollars_cents, 100);
    assert.ok(!body.goals.some((g) => g.id === theirsId), "not another tenant's");
  });

  it('filters by status and pages with limit and offset', async () => {
    const drafts = (await (await api('/goals?status=draft')).json()) as { goals: Body[]; total: number };
    assert.deepEqual([drafts.goals.map((g) => g.id), drafts.total], [[draftId], 1]);
    const page = (await (await api('/goals?limit=1&offset=1')).json()) as {
      goals: Body[];
      total: number;
      limit: number;
    };
    assert.deepEqual([page.goals.map((g) => g.id), page.total, page.limit], [[activeId], 3, 1]);
    const max = await api('/goals?limit=200');
    assert.equal(max.status, 200);
    const theirs = (await (await api('/goals', { token: otherToken })).json()) as { goals: Body[] };
    assert.deepEqual(
      theirs.goals.map((g) => g.id),
      [theirsId],
    );
  });

  it('refuses a bad query with 400 ErrInvalidInput', async () => {
    for (const q of [
      'limit=0',
      'limit=201',
      'limit=abc',
      'limit=1.5',
      'limit=1e1',
      'limit=0x10',
      'limit=',
      'limit=1&limit=2',
      'offset=-1',
      'status=done',
      'owner=1',
    ]) {
      await apiError(`/goals?${q}`, 400, 'ErrInvalidInput');
    }
  });

  it('needs an owner token: none → 401, an agent token → 403', async () => {
    const none = await api('/goals', { token: null });
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer /);
    assert.equal((await api('/goals', { token: 'colony_not-a-token' })).status, 401);
    const agent = await api('/goals', { token: f.agentToken });
    assert.equal(agent.status, 403);
    assert.match(agent.headers.get('www-authenticate') ?? '', /insufficient_scope/);
  });
});

describe('GET /api/goals/:id', () => {
  it('returns the snapshot: goal, tasks_tree, spawned_agents, cost_breakdown, recent_events', async () => {
    const res = await api(`/goals/${pausedId}`);
    assert.equal(res.status, 200);
    const s = (await res.json()) as {
      goal: Body;
      tasks_tree: { title: string; rollup: Body; children: { title: string; status: string; assignee: Body }[] }[];
      spawned_agents: Body[];
      cost_breakdown: Body;
      recent_events: Body[];
    };
    assert.deepEqual(Object.keys(s).sort(), [
      'cost_breakdown',
      'goal',
      'recent_events',
      'spawned_agents',
      'tasks_tree',
    ]);
    assert.equal(s.goal.id, pausedId);
    assert.equal(s.goal.status, 'paused');
    assert.match(s.goal.paused_reason as string, /budget/);
    assert.deepEqual([s.goal.spent_dollars_cents, s.goal.budget_dollars_cents], [100, 100]);
    assert.equal(s.tasks_tree.length, 1);
    assert.deepEqual(s.tasks_tree[0]!.rollup, { tokens: 500, dollars_cents: 100, task_count: 2 });
    assert.deepEqual(
      s.tasks_tree[0]!.children.map((c) => [c.title, c.status, c.assignee?.name]),
      [['Leaf task', 'claimed', 'worker']],
    );
    assert.deepEqual(
      s.spawned_agents.map((a) => [a.name, a.role]),
      [
        ['coordinator', 'coordinator'],
        ['worker', 'specialist'],
      ],
    );
    assert.deepEqual((s.cost_breakdown as { total: Body }).total, { tokens: 500, dollars_cents: 100, task_count: 2 });
    assert.ok(
      s.recent_events.some((e) => e.event === 'GoalPaused'),
      'the pause is in the goal channel',
    );

    const draft = (await (await api(`/goals/${draftId}`)).json()) as { goal: Body; tasks_tree: unknown[] };
    assert.deepEqual([draft.goal.status, draft.tasks_tree], ['draft', []]);
  });

  it("hides another tenant's goal (404 ErrGoalNotFound), both ways", async () => {
    await apiError(`/goals/${theirsId}`, 404, 'ErrGoalNotFound');
    await apiError(`/goals/${pausedId}`, 404, 'ErrGoalNotFound', { token: otherToken });
    await apiError('/goals/999999', 404, 'ErrGoalNotFound');
    const res = await api(`/goals/${theirsId}`, { token: otherToken });
    assert.equal(res.status, 200);
  });

  it('refuses a bad id with 400 ErrInvalidInput', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '1e0', '0x1', '%201', '99999999999999999999'])
      await apiError(`/goals/${id}`, 400, 'ErrInvalidInput');
  });

  it('needs an owner token', async () => {
    assert.equal((await api(`/goals/${activeId}`, { token: null })).status, 401);
    assert.equal((await api(`/goals/${activeId}`, { token: f.agentToken })).status, 403);
  });
});

describe('POST /api/goals/:id/resume', () => {
  it('refuses without a token (401) or with an agent token (403), appending nothing', async () => {
    const before = f.eventCount();
    assert.equal(
      (await api(`/goals/${pausedId}/resume`, { method: 'POST', token: null, body: { new_budget_dollars_cents: 500 } }))
        .status,
      401,
    );
    assert.equal(
      (
        await api(`/goals/${pausedId}/resume`, {
          method: 'POST',
          token: f.agentToken,
          body: { new_budget_dollars_cents: 500 },
        })
      ).status,
      403,
    );
    assert.equal(f.eventCount(), before);
  });

  it('refuses bad input, another tenant and a budget still spent', async () => {
    await apiError(`/goals/${pausedId}/resume`, 400, 'ErrInvalidInput', {
      method: 'POST',
      body: { new_budget_dollars_cents: -1 },
    });
    await apiError(`/goals/${pausedId}/resume`, 400, 'ErrInvalidInput', {
      method: 'POST',
      body: { new_budget_dollars_cents: '500' },
    });
    await apiError(`/goals/${pausedId}/resume`, 400, 'ErrInvalidInput', { method: 'POST', body: { budget: 500 } });
    await apiError(`/goals/${pausedId}/resume`, 400, 'ErrInvalidInput', { method: 'POST', body: [500] });
    await apiError('/goals/abc/resume', 400, 'ErrInvalidInput', { method: 'POST', body: {} });
    const malformed = await api(`/goals/${pausedId}/resume`, { method: 'POST', raw: '{"new_budget' });
    assert.equal(malformed.status, 400);
    assert.match(malformed.headers.get('content-type') ?? '', /application\/json/);
    await apiError(`/goals/${pausedId}/resume`, 404, 'ErrGoalNotFound', {
      method: 'POST',
      token: otherToken,
      body: { new_budget_dollars_cents: 500 },
    });
    await apiError('/goals/999999/resume', 404, 'ErrGoalNotFound', { method: 'POST', body: {} });
    await apiError(`/goals/${pausedId}/resume`, 409, 'ErrGoalBudgetExceeded', { method: 'POST', body: {} });
    await apiError(`/goals/${pausedId}/resume`, 409, 'ErrGoalBudgetExceeded', {
      method: 'POST',
      body: { new_budget_dollars_cents: 100 },
    });
    await apiError(`/goals/${draftId}/resume`, 409, 'ErrIllegalTransition', { method: 'POST', body: {} });
    assert.equal(((await (await api(`/goals/${pausedId}`)).json()) as { goal: Body }).goal.status, 'paused');
  });

  it('resumes a paused goal with a raised budget: paused → active', async () => {
    const res = await api(`/goals/${pausedId}/resume`, { method: 'POST', body: { new_budget_dollars_cents: 300 } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { goal_id: pausedId, status: 'active' });
    const s = (await (await api(`/goals/${pausedId}`)).json()) as { goal: Body; recent_events: Body[] };
    assert.deepEqual([s.goal.status, s.goal.budget_dollars_cents, s.goal.paused_reason], ['active', 300, null]);
    assert.ok(
      s.recent_events.some((e) => e.event === 'GoalResumed' && /paused → active by owner/.test(e.body as string)),
    );
    const listed = (await (await api('/goals?status=active')).json()) as { goals: Body[] };
    assert.ok(listed.goals.some((g) => g.id === pausedId));
  });

  it('an active goal without new budgets is left as it is', async () => {
    const before = f.eventCount();
    const res = await api(`/goals/${activeId}/resume`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { goal_id: activeId, status: 'active' });
    assert.equal(f.eventCount(), before);
  });
});
