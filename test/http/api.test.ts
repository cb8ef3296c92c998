import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configureRuntime } from '../../src/actions/runs/agent-controls.js';
import { createGoal } from '../../src/actions/goals.js';
import { createOwner, registerAgent } from '../../src/actions/principals.js';
import { proposeTaskTree } from '../../src/actions/proposals.js';
import { recordEvidence } from '../../src/actions/reputation.js';
import { requestResource } from '../../src/actions/resources.js';
import { finishRun, requestRun, startQueuedRun } from '../../src/actions/runs.js';
import { addRecipe } from '../../src/actions/verifiers.js';
import type { TreeRequest } from '../../src/events/proposals.js';
import { inbox } from '../../src/projections/channel-queries.js';
import { getAgent } from '../../src/projections/principal-queries.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { agentSpeaker, Browser, leaf, OWNER, ownerSpeaker, type Body } from './console-client.js';

/**
 * The console's reads and the owner's actions over real sockets, through a signed-in browser session
 * (the owner's and an agent's): each endpoint's main path and a bad input (ErrInvalidInput, nothing
 * written), the tenant boundary, resource requests fulfilled (the value sealed, never in the log) and
 * rejected, the confirmation step of cancelling a task, and verifying the log.
 */
let f: HttpFixture;
let owner: Browser;
let worker: Browser;
let stranger: Browser;
let goalA: number;
let goalB: number;
let proposalA: number;
let proposalB: number;
let theirGoal: number;
let runner: { agentId: number; name: string };
let runId: number;
let taskIds: number[] = [];
const SECRET = 'sk-console-test-4d1f9e7a';

const goal = (title: string, by = ownerSpeaker(), actor = OWNER) =>
  createGoal(
    f.app,
    by,
    {
      title,
      description: 'A goal for the console API tests.',
      budgets: { tokens: null, cents: null },
      maxSpawnDepth: 3,
      coordinatorConfig: 'default',
      approvalMode: 'human',
    },
    actor,
  ).goalId;
const workerInbox = () =>
  inbox(
    f.app.engine.db,
    { key: `agent-${f.agentId}`, tenant: 1, name: 'worker' },
    { includeRead: true, minPriority: 0, fromName: null, limit: 100 },
  ).messages;

before(async () => {
  f = await httpFixture();
  const O = ownerSpeaker();
  addRecipe(
    f.app,
    O,
    { name: 'lint', command: 'npm run lint --silent', cwd: null, writable: false, timeoutSec: 30, secrets: [] },
    OWNER,
  );
  goalA = goal('Keep the docs accurate');
  proposalA = proposeTaskTree(
    f.app,
    O,
    goalA,
    'Two steps: check, then fix.',
    {
      ...leaf('Root task'),
      children: [leaf('Check the pages', { verifier_config: { kind: 'command', recipe: 'lint' } })],
    } as TreeRequest,
    OWNER,
  ).proposalId;
  goalB = goal('A goal to drop');
  proposalB = proposeTaskTree(f.app, O, goalB, 'One step.', leaf('Only task') as TreeRequest, OWNER).proposalId;
  runner = registerAgent(
    f.app,
    {
      name: 'runner',
      ownerId: 1,
      model: 'test-model',
      systemPrompt: 'You run the nightly checks with care.',
      toolScope: ['whoami'],
      tier: 'supervised',
      command: 'true',
      parentId: null,
      spawnDepth: 0,
    },
    OWNER,
  );
  configureRuntime(f.app, 1, runner.agentId, { cooldownSec: 0 }, 'user-1', OWNER);
  const q = requestRun(f.app, { agentId: runner.agentId, source: 'manual', by: 'user-1', prompt: 'Check the links.' });
  assert.ok(startQueuedRun(f.app, q.run.runId));
  finishRun(f.app, q.run.runId, {
    status: 'succeeded',
    exitCode: 0,
    signal: null,
    durationMs: 1200,
    tokensIn: 10,
    tokensOut: 20,
    costCents: 1,
    outputTail: '',
    agentText: 'All links work.',
  });
  runId = q.run.runId;
  const other = createOwner(f.app, 'other-owner', { actor: 'system' });
  theirGoal = goal('Their goal', ownerSpeaker(other.userId, 'other-owner'), { actor: 'user:other-owner' });
  owner = new Browser(f);
  await owner.signIn(f.ownerToken);
  worker = new Browser(f);
  await worker.signIn(f.agentToken);
  stranger = new Browser(f);
  await stranger.signIn(other.token);
});
after(() => f.close());

describe('proposals', () => {
  it('lists pending proposals with the tree and every command line it runs', async () => {
    const { proposals } = await worker.json('/proposals');
    assert.deepEqual(
      proposals.map((p: Body) => p.id),
      [proposalB, proposalA],
    );
    const a = proposals.find((p: Body) => p.id === proposalA);
    assert.deepEqual(
      [a.kind, a.goal_id, a.goal_title, a.proposer, a.status, a.task_count, a.reasoning],
      ['tree', goalA, 'Keep the docs accurate', 'owner', 'pending', 2, 'Two steps: check, then fix.'],
    );
    assert.equal(a.tree.children[0].title, 'Check the pages');
    assert.equal(a.commands.length, 1);
    assert.match(a.commands[0], /recipe "lint": sh -c "npm run lint --silent" in .*, timeout 30s/);
    assert.deepEqual((await stranger.json('/proposals')).proposals, []);
    await owner.error('/proposals?status=maybe', {}, 400, 'ErrInvalidInput');
  });

  it('approves one: its tasks are created in the same command', async () => {
    await owner.error('/proposals/abc/approve', { method: 'POST', body: {} }, 400, 'ErrInvalidInput');
    await stranger.error(`/proposals/${proposalA}/approve`, { method: 'POST', body: {} }, 404, 'ErrProposalNotFound');
    const r = await owner.json(`/proposals/${proposalA}/approve`, { method: 'POST', body: {} });
    assert.deepEqual([r.proposal_id, r.status, r.task_ids.length, 'agent_id' in r], [proposalA, 'approved', 2, false]);
    taskIds = r.task_ids;
    assert.equal((await owner.json(`/goals/${goalA}`)).goal.status, 'active');
    assert.deepEqual(
      (await owner.json('/proposals?status=approved')).proposals.map((p: Body) => p.id),
      [proposalA],
    );
    const again = await owner.send(`/proposals/${proposalA}/approve`, { method: 'POST', body: {} });
    assert.equal(again.status, 409);
  });

  it('rejects one with a reason (an empty one is refused)', async () => {
    await owner.error(
      `/proposals/${proposalB}/reject`,
      { method: 'POST', body: { reason: '  ' } },
      400,
      'ErrInvalidInput',
    );
    const r = await owner.json(`/proposals/${proposalB}/reject`, {
      method: 'POST',
      body: { reason: 'Not worth it now.' },
    });
    assert.deepEqual(r, { proposal_id: proposalB, status: 'rejected' });
    assert.equal((await owner.json('/proposals?status=rejected')).proposals[0].reason, 'Not worth it now.');
  });
});

describe("a goal's history, timeline and completion", () => {
  it('history: the ascending positions of every event of the goal, its tasks, proposals and channel', async () => {
    const h = await worker.json(`/goals/${goalA}/history`);
    assert.equal(h.head, f.eventCount());
    assert.ok(h.positions.length > 5);
    assert.deepEqual(
      [...h.positions].sort((x: number, y: number) => x - y),
      h.positions,
    );
    assert.equal(h.types.length, h.positions.length);
    assert.equal(h.at.length, h.positions.length);
    for (const type of ['GoalCreated', 'TaskTreeProposed', 'ProposalApproved', 'TaskCreated', 'GoalActivated'])
      assert.ok(h.types.includes(type), type);
    assert.ok(!h.types.includes('RunFinished'), "not another stream's");
    await worker.error('/goals/0/history', {}, 400, 'ErrInvalidInput');
  });

  it('timeline: the goal channel newest first, paged with before', async () => {
    const first = await worker.json(`/goals/${goalA}/timeline?limit=2`);
    assert.equal(first.messages.length, 2);
    const [m1, m2] = first.messages;
    assert.ok(m1.id > m2.id);
    for (const k of ['id', 'from', 'from_kind', 'kind', 'event', 'body', 'created_at', 'metadata'])
      assert.ok(k in m1, k);
    assert.equal(first.next_before, m2.id);
    const all = await worker.json(`/goals/${goalA}/timeline?limit=200`);
    assert.equal(all.next_before, null);
    const rest = await worker.json(`/goals/${goalA}/timeline?before=${first.next_before}&limit=200`);
    assert.deepEqual(
      [...first.messages, ...rest.messages].map((m: Body) => m.id),
      all.messages.map((m: Body) => m.id),
    );
    await worker.error(`/goals/${goalA}/timeline?limit=201`, {}, 400, 'ErrInvalidInput');
    await stranger.error(`/goals/${goalA}/timeline`, {}, 404, 'ErrGoalNotFound');
  });

  it('completes a goal as the owner', async () => {
    await owner.error(
      `/goals/${goalB}/complete`,
      { method: 'POST', body: { status: 'done', summary: 'x' } },
      400,
      'ErrInvalidInput',
    );
    const r = await owner.json(`/goals/${goalB}/complete`, {
      method: 'POST',
      body: { status: 'cancelled', summary: 'Dropped for now.' },
    });
    assert.deepEqual([r.goal_id, r.status], [goalB, 'cancelled']);
  });
});

describe('resource requests', () => {
  let wanted: number;
  let declined: number;
  before(() => {
    const W = agentSpeaker(f.agentId, 'worker');
    const ask = (name: string) =>
      requestResource(
        f.app,
        W,
        { name, resourceType: 'api_key', reason: `${name} to call the link checker`, taskId: taskIds[1]! },
        { actor: 'agent:worker' },
      ).requestId;
    wanted = ask('CHECKER_KEY');
    declined = ask('ADMIN_PASSWORD');
  });

  it('lists the pending ones with the scope a fulfilment goes to', async () => {
    const { requests } = await worker.json('/requests');
    assert.deepEqual(
      requests.map((r: Body) => r.id),
      [declined, wanted],
    );
    const r = requests[1];
    assert.deepEqual(
      [r.name, r.resource_type, r.task_id, r.goal_id, r.requester, r.scope, r.status],
      ['CHECKER_KEY', 'api_key', taskIds[1], goalA, 'worker', 'agent:worker', 'pending'],
    );
    await owner.error('/requests?status=open', {}, 400, 'ErrInvalidInput');
    assert.deepEqual((await stranger.json('/requests')).requests, []);
  });

  it("fulfils one: the value sealed into the requester's scope, never in the log or the answer, the requester told", async () => {
    await owner.error(`/requests/${wanted}/fulfil`, { method: 'POST', body: {} }, 400, 'ErrInvalidInput');
    await owner.error(`/requests/${wanted}/fulfil`, { method: 'POST', body: { value: '' } }, 400, 'ErrInvalidInput');
    await stranger.error(`/requests/${wanted}/fulfil`, { method: 'POST', body: { value: SECRET } }, 404, 'ErrNotFound');
    const res = await owner.send(`/requests/${wanted}/fulfil`, { method: 'POST', body: { value: SECRET } });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.ok(!text.includes(SECRET));
    const r = JSON.parse(text) as Body;
    assert.deepEqual([r.request_id, r.status, typeof r.secret_id], [wanted, 'fulfilled', 'number']);
    const logged = f.app.engine.db
      .prepare('SELECT count(*) AS n FROM es_events WHERE data LIKE ? OR meta LIKE ?')
      .get(`%${SECRET}%`, `%${SECRET}%`) as { n: number };
    assert.equal(logged.n, 0, 'the value is not in the log');
    assert.deepEqual(
      (await owner.json('/secrets/agent/worker')).map((s: Body) => [s.name, s.available]),
      [['CHECKER_KEY', true]],
    );
    assert.equal((await owner.json('/requests?status=fulfilled')).requests[0].scope, 'agent:worker');
    assert.ok(
      workerInbox().some((m) => m.metadata?.event === 'ResourceRequestFulfilled' && m.metadata.request_id === wanted),
    );
    await owner.error(
      `/requests/${wanted}/fulfil`,
      { method: 'POST', body: { value: SECRET } },
      409,
      'ErrRequestNotPending',
    );
  });

  it('rejects one with a reason, which the requester gets', async () => {
    await owner.error(`/requests/${declined}/reject`, { method: 'POST', body: { reason: '' } }, 400, 'ErrInvalidInput');
    const r = await owner.json(`/requests/${declined}/reject`, {
      method: 'POST',
      body: { reason: 'Use the read-only account instead.' },
    });
    assert.deepEqual(r, { request_id: declined, status: 'rejected' });
    assert.deepEqual(
      (await owner.json('/requests?status=rejected')).requests.map((x: Body) => x.id),
      [declined],
    );
    const dm = workerInbox().find((m) => m.metadata?.event === 'ResourceRequestRejected');
    assert.match(dm?.body ?? '', /rejected by owner: Use the read-only account instead\./);
    await owner.error(
      `/requests/${declined}/reject`,
      { method: 'POST', body: { reason: 'again' } },
      409,
      'ErrRequestNotPending',
    );
  });
});

describe('cancelling a task', () => {
  it('asks for confirmation first, then cancels with the token bound to the same arguments', async () => {
    const task = taskIds[1]!;
    await owner.error(`/tasks/${task}/cancel`, { method: 'POST', body: { reason: 'no' } }, 400, 'ErrInvalidInput');
    await stranger.error(
      `/tasks/${task}/cancel`,
      { method: 'POST', body: { reason: 'not yours' } },
      404,
      'ErrTaskNotFound',
    );
    const before = f.eventCount();
    const ask = await owner.json(`/tasks/${task}/cancel`, {
      method: 'POST',
      body: { reason: 'Superseded by a new plan.' },
    });
    assert.equal(ask.confirmation_required, true);
    assert.deepEqual(ask.args_preview, { task_id: task, reason: 'Superseded by a new plan.' });
    assert.match(ask.message, /within 60 s/);
    assert.equal(f.eventCount(), before);
    await owner.error(
      `/tasks/${task}/cancel`,
      { method: 'POST', body: { reason: 'Another reason.', confirmation_token: ask.confirm_token } },
      400,
      'ErrConfirmationMismatch',
    );
    await owner.error(
      `/tasks/${task}/cancel`,
      { method: 'POST', body: { reason: 'Superseded by a new plan.', confirmation_token: ask.confirm_token } },
      400,
      'ErrConfirmationInvalid',
    );
    const again = await owner.json(`/tasks/${task}/cancel`, {
      method: 'POST',
      body: { reason: 'Superseded by a new plan.' },
    });
    const done = await owner.json(`/tasks/${task}/cancel`, {
      method: 'POST',
      body: { reason: 'Superseded by a new plan.', confirmation_token: again.confirm_token },
    });
    assert.deepEqual(done, { task_id: task, status: 'cancelled' });
  });
});

describe('agents and runs', () => {
  it("lists the team's agents with runtime status and reputation", async () => {
    const { agents } = await worker.json('/agents');
    assert.deepEqual(agents.map((a: Body) => a.name).sort(), ['coordinator', 'runner', 'worker']);
    const r = agents.find((a: Body) => a.name === 'runner');
    for (const k of [
      'id',
      'name',
      'model',
      'tier',
      'status',
      'quarantined',
      'parent_id',
      'parent',
      'spawn_depth',
      'config_hash',
      'rolling_score',
    ])
      assert.ok(k in r, k);
    assert.deepEqual([r.status, r.quarantined, r.rolling_score.toFixed(3)], ['idle', false, '0.500']);
    const theirs = (await stranger.json('/agents')).agents.map((a: Body) => a.id);
    assert.ok(theirs.length === 1 && !agents.some((a: Body) => theirs.includes(a.id)), 'only their own coordinator');
  });

  it('shows one agent: config, runtime and confinement, reputation, runs; the system prompt to the owner and the agent itself only', async () => {
    const d = await owner.json('/agents/runner');
    assert.equal(d.agent.system_prompt, 'You run the nightly checks with care.');
    assert.deepEqual(
      [
        d.agent.command,
        d.agent.runtime.status,
        d.agent.runtime.cooldown_sec,
        typeof d.agent.runtime.timeout_sec,
        typeof d.agent.runtime.network,
      ],
      ['true', 'idle', 0, 'number', 'string'],
    );
    assert.deepEqual(
      d.runs.map((r: Body) => [r.id, r.source, r.status, r.tokens_in, r.tokens_out, r.cost_cents]),
      [[runId, 'manual', 'succeeded', 10, 20, 1]],
    );
    assert.equal(typeof d.runs[0].sandbox, 'string');
    assert.equal(d.reputation.rolling_score.toFixed(3), '0.500');
    assert.deepEqual(
      d.reputation.evidence.map((e: Body) => [e.domain, e.delta, e.ref]),
      [['default', 0.5, 'seed:bootstrap']],
    );
    assert.equal((await worker.json('/agents/runner')).agent.system_prompt, null);
    assert.equal((await worker.json('/agents/worker')).agent.system_prompt, 'You do small, careful tasks.');
    await stranger.error('/agents/runner', {}, 404, 'ErrNotFound');
    await owner.error(`/agents/${'x'.repeat(65)}`, {}, 400, 'ErrInvalidInput');
  });

  it('shows a run with its transcript only to those who may read its sessions', async () => {
    const r = await owner.json(`/runs/${runId}`);
    assert.deepEqual([r.run.id, r.run.agent, r.run.status, r.run.exit_code], [runId, 'runner', 'succeeded', 0]);
    assert.deepEqual(
      r.transcript.map((m: Body) => m.role),
      ['user', 'agent'],
    );
    assert.equal(r.transcript[1].content, 'All links work.');
    await worker.error(`/runs/${runId}`, {}, 404, 'ErrNotFound');
    await stranger.error(`/runs/${runId}`, {}, 404, 'ErrNotFound');
    await owner.error('/runs/1.5', {}, 400, 'ErrInvalidInput');
    await owner.error('/runs/99999', {}, 404, 'ErrNotFound');
  });

  it('stops, wakes (refused while stopped), starts and wakes an agent', async () => {
    await owner.error('/agents/runner/stop', { method: 'POST', body: { reason: 5 } }, 400, 'ErrInvalidInput');
    const stopped = await owner.json('/agents/runner/stop', {
      method: 'POST',
      body: { reason: 'Maintenance window.' },
    });
    assert.deepEqual([stopped.name, stopped.status, stopped.stopped], ['runner', 'stopped', true]);
    const refused = await owner.json('/agents/runner/wake', { method: 'POST', body: {} });
    assert.deepEqual([refused.outcome, refused.gate], ['refused', 'stopped']);
    const started = await owner.json('/agents/runner/start', { method: 'POST' });
    assert.equal(started.stopped, false);
    await owner.error('/agents/runner/wake', { method: 'POST', body: { prompt: 7 } }, 400, 'ErrInvalidInput');
    const woken = await owner.json('/agents/runner/wake', { method: 'POST', body: { prompt: 'Check the new pages.' } });
    assert.deepEqual([typeof woken.run_id, woken.outcome], ['number', 'queued']);
    await stranger.error('/agents/runner/stop', { method: 'POST', body: {} }, 404, 'ErrNotFound');
  });

  it('lifts a quarantine', async () => {
    recordEvidence(f.app, getAgent(f.app.engine.db, f.agentId)!, 'default', -1, 'test: a bad verdict', OWNER);
    assert.equal((await owner.json('/agents/worker')).agent.quarantined, true);
    await owner.error('/agents/worker/unquarantine', { method: 'POST', body: { now: true } }, 400, 'ErrInvalidInput');
    const r = await owner.json('/agents/worker/unquarantine', { method: 'POST', body: {} });
    assert.deepEqual([r.name, r.quarantined], ['worker', false]);
  });
});

describe('audit trail and integrity', () => {
  it("audit: the owner's tenant's tool calls only, filtered", async () => {
    const mine = await f.connect(f.agentToken);
    await mine.callTool({ name: 'whoami', arguments: {} });
    const theirs = await f.connect(createOwner(f.app, 'third-owner', { actor: 'system' }).token);
    await theirs.callTool({ name: 'whoami', arguments: {} });
    const { rows } = await owner.json('/audit?tool=whoami&outcome=success&limit=10');
    assert.deepEqual(
      rows.map((r: Body) => [r.principal, r.principal_id, r.tool, r.outcome]),
      [['agent:worker', `agent:${f.agentId}`, 'whoami', 'success']],
    );
    assert.deepEqual((await owner.json('/audit?principal=user:third-owner')).rows, []);
    await owner.error('/audit?outcome=fine', {}, 400, 'ErrInvalidInput');
  });

  it('integrity: the head, the last verification, each projection; POST /api/verify walks the chain now and records it', async () => {
    const i = await worker.json('/integrity');
    assert.deepEqual(i.head, f.app.engine.head());
    assert.equal(i.last_verification.state, 'never');
    assert.ok(
      i.projections.length > 5 && i.projections.every((p: Body) => p.state === 'OK'),
      JSON.stringify(i.projections),
    );
    await owner.error('/verify', { method: 'POST', body: { deep: true } }, 400, 'ErrInvalidInput');
    const v = await owner.json('/verify', { method: 'POST' });
    assert.deepEqual(v, { ok: true, events: f.eventCount(), head: f.app.engine.head() });
    const after = await owner.json('/integrity');
    assert.deepEqual([after.last_verification.state, after.last_verification.position], ['ok', v.head.position]);
  });

  it("tenant isolation: another owner's goal is 404 everywhere", async () => {
    for (const path of [
      `/goals/${theirGoal}`,
      `/goals/${theirGoal}/history`,
      `/goals/${theirGoal}/timeline`,
      `/goals/${theirGoal}/replay?position=1`,
    ]) {
      await owner.error(path, {}, 404, 'ErrGoalNotFound');
    }
    await owner.error(`/goals/${theirGoal}/resume`, { method: 'POST', body: {} }, 404, 'ErrGoalNotFound');
  });
});
