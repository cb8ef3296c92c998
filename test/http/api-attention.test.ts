import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOwner } from '../../src/actions/principals.js';
import { recordEvidence } from '../../src/actions/reputation.js';
import { getAgent } from '../../src/projections/principal-queries.js';
import { tasksOfGoal } from '../../src/projections/task-queries.js';
import { ok } from '../helpers/calls.js';
import { finishedRun, runnableAgent } from '../helpers/finished-runs.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { Browser, leaf, OWNER, type Body } from './console-client.js';

/**
 * The owner's "Needs you" over real sockets (GET /api/attention): each kind of item appears when it starts
 * waiting and leaves when the owner's decision (or the event that settles it) lands — proposals, resource
 * requests, paused goals and budget alerts, agents whose runs keep failing, quarantines — and only the
 * caller's tenant's. Beside it, what the goal page reads and does: creating a goal, posting in its channel,
 * the channel split into messages and activity, one task's hand-in and verdict, the goal's artifacts.
 */
let f: HttpFixture;
let owner: Browser;
const DESCRIPTION = 'Keep every page of the documentation site accurate against the code.';
const attention = (as = owner): Promise<Body> => as.json('/attention');

const run = (agentId: number, status: 'failed' | 'succeeded', reason: string | null = null): number =>
  finishedRun(f.app, agentId, status, reason);

before(async () => {
  f = await httpFixture({
    agentTools: [
      'create_goal',
      'propose_task_tree',
      'claim_task',
      'complete_task',
      'report_usage',
      'request_resource',
      'send_message',
      'read_inbox',
    ],
  });
  owner = new Browser(f);
  assert.equal((await owner.signIn(f.ownerToken)).status, 200);
});
after(() => f.close());

describe('GET /api/attention', () => {
  it('is empty on a fresh Colony, with every count zero', async () => {
    const a = await attention();
    assert.deepEqual(a.counts, {
      total: 0,
      approvals: 0,
      requests: 0,
      goals: 0,
      runs: 0,
      quarantined: 0,
      breakers: 0,
      verdicts: 0,
      oauth: 0,
      node: 0,
    });
    assert.deepEqual(
      [a.proposals, a.requests, a.goals, a.failing_agents, a.breakers, a.quarantined, a.node],
      [[], [], [], [], [], [], null],
    );
  });

  it('lists a pending proposal with its commands until it is decided; a resource request until refused', async () => {
    const agent = await f.connect(f.agentToken);
    const g = await ok(agent, 'create_goal', {
      title: 'Plan me',
      description: DESCRIPTION,
      coordinator_config: 'worker',
    });
    const p = await ok(agent, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: { ...leaf('Root'), children: [leaf('Leaf')] },
    });
    let a = await attention();
    assert.deepEqual([a.counts.approvals, a.counts.total], [1, 1]);
    assert.deepEqual([a.proposals[0].id, a.proposals[0].commands], [p.proposal_id, []]);
    await owner.json(`/proposals/${p.proposal_id}/approve`, { method: 'POST', body: {} });
    const leafId = tasksOfGoal(f.app.engine.db, g.goal_id as number).at(-1)!.taskId;
    await ok(agent, 'claim_task', { task_id: leafId });
    const r = await ok(agent, 'request_resource', {
      name: 'DOCS_TOKEN',
      resource_type: 'api_key',
      reason: 'The docs API.',
      task_id: leafId,
    });
    a = await attention();
    assert.deepEqual([a.counts.approvals, a.counts.requests], [0, 1]);
    assert.deepEqual(
      [a.requests[0].id, a.requests[0].scope, a.requests[0].requester],
      [r.request_id, 'agent:worker', 'worker'],
    );
    await owner.json(`/requests/${r.request_id}/reject`, { method: 'POST', body: { reason: 'Not this one.' } });
    assert.equal((await attention()).counts.total, 0);
  });

  it("leaves a big tree's outline to its goal's page (its commands stay), counted all the same", async () => {
    const agent = await f.connect(f.agentToken);
    const g = await ok(agent, 'create_goal', {
      title: 'Big plan',
      description: DESCRIPTION,
      coordinator_config: 'worker',
    });
    const children = Array.from({ length: 31 }, (_, i) => leaf(`Page ${i}`));
    const p = await ok(agent, 'propose_task_tree', { goal_id: g.goal_id, tree: { ...leaf('Site'), children } });
    const listed = (await attention()).proposals.find((x: Body) => x.id === p.proposal_id);
    assert.deepEqual(
      [listed.task_count, listed.tree_omitted, 'tree' in listed, listed.commands],
      [32, true, false, []],
    );
    const whole = (await owner.json('/proposals')).proposals.find((x: Body) => x.id === p.proposal_id);
    assert.equal(whole.tree.children.length, 31);
    await owner.json(`/proposals/${p.proposal_id}/reject`, { method: 'POST', body: { reason: 'Too big.' } });
  });

  it("a closed goal's pending proposal is withdrawn: rejected by Colony with the reason, its proposer told", async () => {
    const agent = await f.connect(f.agentToken);
    const g = await ok(agent, 'create_goal', {
      title: 'Cancel me',
      description: DESCRIPTION,
      coordinator_config: 'worker',
    });
    const p = await ok(agent, 'propose_task_tree', { goal_id: g.goal_id, tree: leaf('Never built') });
    assert.equal((await attention()).counts.approvals, 1);
    await owner.json(`/goals/${g.goal_id}/complete`, {
      method: 'POST',
      body: { status: 'cancelled', summary: 'Not needed.' },
    });
    assert.equal((await attention()).counts.total, 0, 'nothing waits on a goal that is over');
    const rejected = (await owner.json('/proposals?status=rejected')).proposals.find(
      (x: Body) => x.id === p.proposal_id,
    );
    assert.ok(rejected, 'the proposal is rejected, not left pending');
    const inbox = await ok(agent, 'read_inbox', {});
    assert.ok(
      (inbox.messages as Body[]).some((m) =>
        /was rejected by Colony: goal #\d+ was closed as cancelled by owner/.test(m.body),
      ),
      JSON.stringify(inbox),
    );
  });

  it('lists a budget alert until the budget is raised, a paused goal until resumed', async () => {
    const agent = await f.connect(f.agentToken);
    const g = await owner.json(
      '/goals',
      {
        method: 'POST',
        body: {
          title: 'Spend carefully',
          description: DESCRIPTION,
          budget_dollars_cents: 100,
          approval_mode: 'auto',
          coordinator_config: 'worker',
        },
      },
      201,
    );
    const p = await ok(agent, 'propose_task_tree', { goal_id: g.goal_id, tree: leaf('Only task') });
    await owner.json(`/proposals/${p.proposal_id}/approve`, { method: 'POST', body: {} });
    const task = tasksOfGoal(f.app.engine.db, g.goal_id).at(-1)!.taskId;
    await ok(agent, 'claim_task', { task_id: task });
    await ok(agent, 'report_usage', { task_id: task, tokens: 10, cost_cents: 85 });
    let a = await attention();
    assert.deepEqual(
      a.goals.map((x: Body) => [x.goal_id, x.kind]),
      [[g.goal_id, 'budget_alert']],
    );
    assert.match(a.goals[0].reason, /85 % of its cost budget/);
    await owner.json(`/goals/${g.goal_id}/resume`, { method: 'POST', body: { new_budget_dollars_cents: 1000 } });
    assert.deepEqual((await attention()).goals, [], 'a raised budget re-arms the alert');
    await ok(agent, 'report_usage', { task_id: task, tokens: 10, cost_cents: 950 });
    a = await attention();
    assert.deepEqual([a.goals[0].kind, a.goals[0].status, a.counts.goals], ['paused', 'paused', 1]);
    await owner.error(`/goals/${g.goal_id}/resume`, { method: 'POST', body: {} }, 409, 'ErrGoalBudgetExceeded');
    await owner.json(`/goals/${g.goal_id}/resume`, { method: 'POST', body: { new_budget_dollars_cents: 5000 } });
    assert.equal((await attention()).counts.goals, 0);
  });

  it('lists an agent whose runs keep failing, with the count and the last reason, until one succeeds or it is stopped', async () => {
    const flaky = { agentId: runnableAgent(f.app, 'flaky') };
    run(flaky.agentId, 'failed', 'first refusal');
    const last = run(flaky.agentId, 'failed', 'Claude Code credentials were refused: 401');
    let a = await attention();
    assert.deepEqual(
      a.failing_agents.map((x: Body) => [x.agent, x.failures, x.run_id, x.cause, x.reason]),
      [['flaky', 2, last, 'auth', 'Claude Code credentials were refused: 401']],
    );
    // The worker's console session sees that flaky fails, not why: flaky's runs are not the worker's to read.
    const workerSession = new Browser(f);
    assert.equal((await workerSession.signIn(f.agentToken)).status, 200);
    assert.deepEqual(
      (await attention(workerSession)).failing_agents.map((x: Body) => [x.agent, x.reason]),
      [['flaky', null]],
    );
    run(flaky.agentId, 'succeeded');
    assert.deepEqual((await attention()).failing_agents, []);
    run(flaky.agentId, 'failed', 'again');
    assert.equal((await attention()).failing_agents[0].failures, 1, 'counted since the last success');
    await owner.json('/agents/flaky/stop', { method: 'POST', body: { reason: 'Enough.' } });
    a = await attention();
    assert.deepEqual([a.failing_agents, a.counts.runs], [[], 0]);
  });

  it('lists a quarantined agent until the quarantine is lifted; another tenant sees none of it', async () => {
    recordEvidence(f.app, getAgent(f.app.engine.db, f.agentId)!, 'default', -1, 'test: a bad verdict', OWNER);
    const a = await attention();
    assert.deepEqual(
      a.quarantined.map((x: Body) => x.agent),
      ['worker'],
    );
    const stranger = new Browser(f);
    await stranger.signIn(createOwner(f.app, 'stranger', OWNER).token);
    assert.equal((await attention(stranger)).counts.total, 0);
    await owner.json('/agents/worker/unquarantine', { method: 'POST', body: {} });
    assert.deepEqual((await attention()).quarantined, []);
  });
});

describe('the goal page', () => {
  it('creates a goal (create_goal’s checks, nothing written on bad input) and posts in its channel', async () => {
    await owner.error(
      '/goals',
      { method: 'POST', body: { title: 'x', description: DESCRIPTION } },
      400,
      'ErrInvalidInput',
    );
    await owner.error(
      '/goals',
      { method: 'POST', body: { title: 'Fine title', description: DESCRIPTION, extra: 1 } },
      400,
      'ErrInvalidInput',
    );
    const g = await owner.json(
      '/goals',
      { method: 'POST', body: { title: 'Talk to me', description: DESCRIPTION, coordinator_config: 'worker' } },
      201,
    );
    assert.equal(g.status, 'draft');
    await owner.error(
      `/goals/${g.goal_id}/messages`,
      { method: 'POST', body: { body: '   ' } },
      400,
      'ErrInvalidInput',
    );
    const sent = await owner.json(
      `/goals/${g.goal_id}/messages`,
      { method: 'POST', body: { body: '@worker please start with the index.' } },
      201,
    );
    const messages = await owner.json(`/goals/${g.goal_id}/timeline?show=messages`);
    assert.deepEqual(
      messages.messages.map((m: Body) => [m.id, m.from, m.from_kind, m.body]),
      [[sent.message_id, 'owner', 'user', '@worker please start with the index.']],
    );
    const activity = await owner.json(`/goals/${g.goal_id}/timeline?show=activity`);
    assert.deepEqual(activity.messages, [], "the owner's message is no activity; a draft has none yet");
    await owner.error(`/goals/${g.goal_id}/timeline?show=everything`, {}, 400, 'ErrInvalidInput');
  });

  it("shows a task's hand-in and verdict, the goal's artifacts, and its progress", async () => {
    const agent = await f.connect(f.agentToken);
    const g = await owner.json(
      '/goals',
      {
        method: 'POST',
        body: {
          title: 'Produce a thing',
          description: DESCRIPTION,
          approval_mode: 'auto',
          coordinator_config: 'worker',
        },
      },
      201,
    );
    const p = await ok(agent, 'propose_task_tree', { goal_id: g.goal_id, tree: leaf('Write the page') });
    await owner.json(`/proposals/${p.proposal_id}/approve`, { method: 'POST', body: {} });
    const task = tasksOfGoal(f.app.engine.db, g.goal_id).at(-1)!.taskId;
    await ok(agent, 'claim_task', { task_id: task });
    const art = await ok(agent, 'send_message', {
      channel_id: g.channel_id,
      body: 'The page, in full.',
      subject: 'index.md',
      metadata: '{"kind":"artifact"}',
    });
    await ok(agent, 'complete_task', {
      task_id: task,
      summary: 'Wrote the page; every link checked.',
      artifact_message_ids: [art.message_id],
    });
    // The goal requires evidence: the handed-in leaf waits for the owner's verdict, given here.
    assert.equal((await owner.json(`/tasks/${task}`)).status, 'awaiting_verification');
    await owner.json(`/tasks/${task}/verdict`, { method: 'POST', body: { verdict: 'approve' } });
    const detail = await owner.json(`/tasks/${task}`);
    assert.deepEqual(
      [detail.status, detail.summary, detail.verdict, detail.artifacts.map((a: Body) => a.subject)],
      ['done', 'Wrote the page; every link checked.', 'approve', ['index.md']],
    );
    const outcome = await owner.json(`/goals/${g.goal_id}/outcome`);
    assert.deepEqual(
      outcome.artifacts.map((a: Body) => [a.message_id, a.task_ids]),
      [[art.message_id, [task]]],
    );
    assert.deepEqual(outcome.working, []);
    const activity = await owner.json(`/goals/${g.goal_id}/timeline?show=activity`);
    assert.ok(activity.messages.length > 0, 'the transitions are activity');
    assert.ok(
      activity.messages.every((m: Body) => m.from_kind === 'system'),
      JSON.stringify(activity),
    );
    const talk = await owner.json(`/goals/${g.goal_id}/timeline?show=messages`);
    assert.deepEqual(
      talk.messages.map((m: Body) => m.id),
      [art.message_id],
    );
    const snap = await owner.json(`/goals/${g.goal_id}?view=tree`);
    assert.deepEqual(
      [snap.task_statuses, snap.tasks_tree[0].summary, snap.tasks_tree[0].verdict],
      [{ done: 1 }, 'Wrote the page; every link checked.', 'approve'],
    );
    const stranger = new Browser(f);
    await stranger.signIn(createOwner(f.app, 'stranger-2', OWNER).token);
    await stranger.error(`/tasks/${task}`, {}, 404, 'ErrTaskNotFound');
    await stranger.error(`/goals/${g.goal_id}/outcome`, {}, 404, 'ErrGoalNotFound');
  });
});

describe('unknown console URLs', () => {
  it('answer the console (status 404) to a browser, JSON to a program and under /api', async () => {
    for (const path of ['/nope', '/goals/abc', '/integrity']) {
      const page = await fetch(`${f.base}${path}`, {
        headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      });
      assert.equal(page.status, 404, path);
      assert.match(page.headers.get('content-type') ?? '', /text\/html/);
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
      assert.match(await page.text(), /<div id="app">/);
    }
    const program = await fetch(`${f.base}/nope`);
    assert.deepEqual([program.status, ((await program.json()) as Body).error.code], [404, 'ErrNotFound']);
    const api = await fetch(`${f.base}/api/nope`, { headers: { accept: 'text/html' } });
    assert.match(api.headers.get('content-type') ?? '', /application\/json/);
  });
});
