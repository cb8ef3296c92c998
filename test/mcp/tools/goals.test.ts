import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { rotateToken } from '../../../src/actions/principals.js';
import { readAll } from '../../../src/engine/store.js';
import { tasksOfGoal, type TaskRow } from '../../../src/projections/task-queries.js';
import { getProposal } from '../../../src/projections/proposal-queries.js';
import { getAgent, getAgentByName, listAgents } from '../../../src/projections/principal-queries.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';
import { ok, refused } from '../../helpers/calls.js';

/**
 * Goals and task-tree proposals through a real SDK Client:
 * create_goal, propose_task_tree and its decision by reaction, budgets, complete_goal, resume_goal,
 * get_goal, list_goals, tenant isolation — and bad input for every goal tool, which appends nothing.
 */
type Body = Record<string, unknown>;
type Msg = {
  message_id: number;
  body: string;
  from: string;
  kind: string;
  metadata: Record<string, unknown> | null;
  reactions: { reaction: string; by: string }[];
};
type Node = {
  id: number;
  parent_task_id: number | null;
  depth: number;
  title: string;
  status: string;
  ancestry: unknown[];
  children: Node[];
};

let f: McpFixture;
let owner: Client;
let worker: Client;
let coord: Client;
let otherOwner: Client;
let outsider: Client;
let helper: Client;
let coordinatorId: number;
let outsiderId: number;

const DESCRIPTION = 'Keep every page of the documentation site accurate against the code.';
let titles = 0;
/** A goal with a unique title (slugs are per owner, so tests do not collide). */
async function newGoal(
  client: Client,
  extra: Body = {},
): Promise<{ goal_id: number; channel_id: number; slug: string }> {
  titles += 1;
  return (await ok(client, 'create_goal', { title: `Goal number ${titles}`, description: DESCRIPTION, ...extra })) as {
    goal_id: number;
    channel_id: number;
    slug: string;
  };
}

const leaf = (title: string, extra: Body = {}): Body => ({
  title,
  description: `${title}: the work to do here.`,
  ...extra,
});
/** root → [child-1 (with acceptance criteria) → [grandchild], child-2] */
const TREE = {
  ...leaf('Audit the docs'),
  acceptance_criteria: 'Every page checked',
  children: [
    {
      ...leaf('Audit the install guide'),
      acceptance_criteria: 'Install steps run clean',
      billing_code: 'docs',
      children: [leaf('Run the install steps')],
    },
    leaf('Audit the API reference'),
  ],
};

const tasks = (goalId: number): TaskRow[] => tasksOfGoal(f.app.engine.db, goalId);
const goalOf = async (client: Client, goalId: number) =>
  (await ok(client, 'get_goal', { goal_id: goalId })) as {
    goal: Body;
    tasks_tree: Node[];
    spawned_agents: Body[];
    cost_breakdown: Body;
    recent_events: Body[];
  };
const messages = async (client: Client, args: Body): Promise<Msg[]> =>
  (await ok(client, 'get_channel_messages', { limit: 200, ...args })).messages as Msg[];
const eventsAfter = (position: number) => readAll(f.app.engine.db, { after: position, limit: 100_000 });

before(async () => {
  f = await mcpFixture();
  owner = await f.connect(f.ownerToken);
  worker = await f.connect(f.agentToken);
  helper = await f.connect(f.addAgent('helper').token);
  const other = f.addOwner('other-owner');
  otherOwner = await f.connect(other.token);
  const o = f.addAgent('outsider', { ownerId: other.userId });
  outsiderId = o.agentId;
  outsider = await f.connect(o.token);
});
after(() => f.close());

describe('create_goal', () => {
  it("creates a draft goal, its #goal-<slug> channel and the owner's coordinator on first use; no tasks yet", async () => {
    const db = f.app.engine.db;
    assert.equal(getAgentByName(db, f.owner.userId, 'coordinator'), null, 'no coordinator before the first goal');
    const g = await ok(owner, 'create_goal', { title: 'Keep docs.mcpproxy.app accurate', description: DESCRIPTION });
    assert.deepEqual(Object.keys(g).sort(), ['channel_id', 'coordinator_agent_id', 'goal_id', 'slug', 'status']);
    assert.equal(g.slug, 'keep-docs-mcpproxy-app-accurate');
    assert.equal(g.status, 'draft');
    for (const k of ['goal_id', 'channel_id', 'coordinator_agent_id'])
      assert.ok(Number.isInteger(g[k]) && (g[k] as number) > 0, k);

    const coordinator = getAgentByName(db, f.owner.userId, 'coordinator');
    assert.ok(coordinator, 'the coordinator agent was created');
    assert.equal(coordinator.agentId, g.coordinator_agent_id);
    assert.equal(coordinator.ownerId, f.owner.userId);
    coordinatorId = coordinator.agentId;
    coord = await f.connect(rotateToken(f.app, 'agent', coordinatorId, { actor: 'user:owner' }));

    const channels = (await ok(owner, 'list_channels')).channels as {
      channel_id: number;
      name: string;
      description: string;
    }[];
    const channel = channels.find((c) => c.name === 'goal-keep-docs-mcpproxy-app-accurate');
    assert.ok(channel, `the goal channel exists: ${JSON.stringify(channels)}`);
    assert.equal(channel.channel_id, g.channel_id);
    assert.equal(channel.description, 'Goal: Keep docs.mcpproxy.app accurate');

    const snap = await goalOf(owner, g.goal_id as number);
    assert.equal(snap.goal.status, 'draft');
    assert.equal(snap.goal.coordinator_agent_id, coordinatorId);
    assert.equal(snap.goal.coordinator, 'coordinator');
    assert.equal(snap.goal.owner, 'owner');
    assert.equal(snap.goal.channel, 'goal-keep-docs-mcpproxy-app-accurate');
    assert.equal(snap.goal.max_spawn_depth, 3);
    assert.equal(snap.goal.approval_mode, 'human');
    assert.equal(snap.goal.budget_tokens, null);
    assert.equal(snap.goal.budget_dollars_cents, null);
    assert.equal(snap.goal.task_count, 0);
    assert.equal(snap.goal.pending_proposal_id, null);
    assert.deepEqual(snap.tasks_tree, []);
    assert.equal(tasks(g.goal_id as number).length, 0, 'no task exists before a tree is approved');
  });

  it('reuses the coordinator for the next goal, also when an agent of the owner creates it', async () => {
    const second = await ok(owner, 'create_goal', {
      title: 'Second goal',
      description: DESCRIPTION,
      budget_tokens: 5000,
      budget_dollars_cents: 250,
      max_spawn_depth: 5,
    });
    assert.equal(second.coordinator_agent_id, coordinatorId);
    const byAgent = await ok(worker, 'create_goal', { title: 'Goal created by an agent', description: DESCRIPTION });
    assert.equal(byAgent.coordinator_agent_id, coordinatorId);
    assert.equal(
      listAgents(f.app.engine.db, f.owner.userId).filter((a) => a.name === 'coordinator').length,
      1,
      'one coordinator per owner',
    );
    const snap = await goalOf(owner, byAgent.goal_id as number);
    assert.equal(snap.goal.owner_user_id, f.owner.userId, "the goal belongs to the agent's owner");
    const s2 = (await goalOf(owner, second.goal_id as number)).goal;
    assert.deepEqual([s2.budget_tokens, s2.budget_dollars_cents, s2.max_spawn_depth], [5000, 250, 5]);
  });

  it('coordinator_config may name an agent of the owner', async () => {
    const g = await ok(owner, 'create_goal', {
      title: 'Goal coordinated by the worker',
      description: DESCRIPTION,
      coordinator_config: 'worker',
    });
    assert.equal(g.coordinator_agent_id, f.agent.agentId);
    assert.equal((await goalOf(owner, g.goal_id as number)).goal.coordinator, 'worker');
    await refused(
      f,
      owner,
      'create_goal',
      { title: 'Goal with a stranger', description: DESCRIPTION, coordinator_config: 'outsider' },
      'ErrNotFound',
    );
  });

  it("another owner's first goal gets that owner's own coordinator", async () => {
    const g = await ok(otherOwner, 'create_goal', {
      title: 'Keep docs.mcpproxy.app accurate',
      description: DESCRIPTION,
    });
    assert.equal(g.slug, 'keep-docs-mcpproxy-app-accurate', 'slugs are unique per owner, not globally');
    assert.notEqual(g.coordinator_agent_id, coordinatorId);
    const other = getAgent(f.app.engine.db, g.coordinator_agent_id as number)!;
    assert.equal(other.name, 'coordinator');
    assert.notEqual(other.ownerId, f.owner.userId);
  });
});

describe('goal slugs and channel names', () => {
  const channelNames = async (client: Client) =>
    ((await ok(client, 'list_channels')).channels as { name: string }[]).map((c) => c.name);

  const cases: [string, string][] = [
    ['Fix: the API (v2)!', 'fix-the-api-v2'],
    ['a_b/c.d e', 'a-b-c-d-e'],
    ['  --Leading & trailing--  ', 'leading-trailing'],
    ['Café über naïve façade', 'caf-ber-nave-faade'],
    ['Ship   it...now', 'ship-it-now'],
    ['MiXeD CaSe 42', 'mixed-case-42'],
  ];
  for (const [title, slug] of cases) {
    it(`"${title}" → ${slug}`, async () => {
      const g = await ok(owner, 'create_goal', { title, description: DESCRIPTION });
      assert.equal(g.slug, slug);
      assert.ok((await channelNames(owner)).includes(`goal-${slug}`));
    });
  }

  it('a title with no ASCII letter or digit gets the slug "goal", and collisions get -2, -3', async () => {
    const a = await ok(owner, 'create_goal', { title: '日本語のゴール', description: DESCRIPTION });
    const b = await ok(owner, 'create_goal', { title: '!!!', description: DESCRIPTION });
    const c = await ok(owner, 'create_goal', { title: 'Ωμέγα', description: DESCRIPTION });
    assert.deepEqual([a.slug, b.slug, c.slug], ['goal', 'goal-2', 'goal-3']);
    const names = await channelNames(owner);
    for (const n of ['goal-goal', 'goal-goal-2', 'goal-goal-3']) assert.ok(names.includes(n), n);
  });

  it('the same title twice more gets -2 and -3', async () => {
    const a = await ok(owner, 'create_goal', { title: 'Keep docs.mcpproxy.app accurate', description: DESCRIPTION });
    const b = await ok(owner, 'create_goal', { title: 'KEEP docs mcpproxy app accurate', description: DESCRIPTION });
    assert.deepEqual([a.slug, b.slug], ['keep-docs-mcpproxy-app-accurate-2', 'keep-docs-mcpproxy-app-accurate-3']);
    const names = await channelNames(owner);
    assert.ok(
      names.includes('goal-keep-docs-mcpproxy-app-accurate-2') &&
        names.includes('goal-keep-docs-mcpproxy-app-accurate-3'),
    );
  });

  it('a 200-character title keeps the channel name within 64 characters, with room for a suffix', async () => {
    const title = 'Rewrite every single page of the product documentation '.repeat(4).slice(0, 200);
    assert.equal(title.length, 200);
    const a = await ok(owner, 'create_goal', { title, description: DESCRIPTION });
    const b = await ok(owner, 'create_goal', { title, description: DESCRIPTION });
    for (const g of [a, b]) {
      const name = `goal-${g.slug as string}`;
      assert.ok(name.length <= 64, `${name} is ${name.length} characters`);
      assert.match(name, /^[a-z0-9][a-z0-9_-]*$/);
      assert.doesNotMatch(g.slug as string, /^-|-$/);
    }
    assert.ok((a.slug as string).startsWith('rewrite-every-single-page'));
    assert.equal(b.slug, `${a.slug as string}-2`);
    const names = await channelNames(owner);
    assert.ok(names.includes(`goal-${a.slug as string}`) && names.includes(`goal-${b.slug as string}`));
    const long = await ok(owner, 'create_goal', { title: 'x'.repeat(200), description: DESCRIPTION });
    assert.ok(`goal-${long.slug as string}`.length <= 64);
  });

  it('after base and base-2 … base-99 are taken, ErrSlugTaken and nothing appended', async () => {
    for (let i = 1; i <= 99; i += 1)
      await ok(owner, 'create_goal', { title: 'Crowded title', description: DESCRIPTION });
    const names = await channelNames(owner);
    assert.ok(names.includes('goal-crowded-title') && names.includes('goal-crowded-title-99'));
    await refused(f, owner, 'create_goal', { title: 'Crowded title', description: DESCRIPTION }, 'ErrSlugTaken');
  });
});

describe('task-tree proposals', () => {
  let goalId: number;
  let goalChannel: number;
  let proposal: Body;

  before(async () => {
    const g = await newGoal(owner);
    goalId = g.goal_id;
    goalChannel = g.channel_id;
  });

  it('posts ONE message to #approvals carrying the full tree; no task exists yet', async () => {
    const head = f.app.engine.head().position;
    const approvalsBefore = await messages(owner, { channel_name: 'approvals' });
    proposal = await ok(coord, 'propose_task_tree', {
      goal_id: goalId,
      reasoning: 'Split by doc section.',
      tree: TREE,
    });
    assert.equal(proposal.status, 'pending');
    assert.deepEqual(proposal.task_ids, []);
    for (const k of ['proposal_message_id', 'channel_id', 'proposal_id']) assert.ok(Number.isInteger(proposal[k]), k);

    const approvals = await messages(owner, { channel_name: 'approvals' });
    assert.equal(approvals.length, approvalsBefore.length + 1, 'exactly one message');
    const msg = approvals.at(-1)!;
    assert.equal(msg.message_id, proposal.proposal_message_id);
    assert.equal(
      proposal.channel_id,
      ((await ok(owner, 'get_channel_messages', { channel_name: 'approvals', limit: 1 })) as Body).channel_id,
    );
    assert.equal(msg.from, 'coordinator');
    assert.equal(msg.metadata?.kind, 'task_proposal');
    assert.equal(msg.metadata?.goal_id, goalId);
    assert.equal(msg.metadata?.proposal_id, proposal.proposal_id);
    assert.equal(msg.metadata?.reasoning, 'Split by doc section.');
    assert.equal(msg.metadata?.task_count, 4);
    assert.deepEqual(msg.metadata?.tree, TREE, 'the full tree is in the message');
    assert.match(msg.body, /Split by doc section\./);
    for (const t of ['Audit the docs', 'Audit the install guide', 'Run the install steps', 'Audit the API reference'])
      assert.ok(msg.body.includes(t), t);

    assert.equal(tasks(goalId).length, 0, 'nothing is materialized before approval');
    assert.ok(!eventsAfter(head).some((e) => e.type === 'TaskCreated'));
    const snap = await goalOf(owner, goalId);
    assert.equal(snap.goal.status, 'draft');
    assert.equal(snap.goal.pending_proposal_id, proposal.proposal_id);
    assert.deepEqual(snap.tasks_tree, []);
  });

  it('refuses a second proposal while one is pending (ErrProposalPending)', async () => {
    const text = await refused(
      f,
      coord,
      'propose_task_tree',
      { goal_id: goalId, tree: leaf('Another plan') },
      'ErrProposalPending',
    );
    assert.match(text, new RegExp(`\\(${proposal.proposal_id as number}\\)`));
    await refused(f, owner, 'propose_task_tree', { goal_id: goalId, tree: leaf('Owner plan') }, 'ErrProposalPending');
  });

  it("refuses a proposal from an agent that is not the goal's coordinator (ErrNotCoordinator)", async () => {
    const g = await newGoal(owner);
    await refused(
      f,
      worker,
      'propose_task_tree',
      { goal_id: g.goal_id, tree: leaf('Worker plan') },
      'ErrNotCoordinator',
    );
  });

  it("an agent's approve or reject on a proposal is ErrForbidden and appends nothing", async () => {
    const id = proposal.proposal_message_id as number;
    await refused(f, worker, 'react', { message_id: id, reaction: 'approve' }, 'ErrForbidden');
    await refused(
      f,
      worker,
      'react',
      { message_id: id, reaction: 'reject', metadata: '{"reason":"no"}' },
      'ErrForbidden',
    );
    await refused(f, helper, 'react', { message_id: id, reaction: 'approve' }, 'ErrForbidden');
    await refused(f, coord, 'react', { message_id: id, reaction: 'approve' }, 'ErrToolNotInScope');
    const msg = (await messages(owner, { channel_name: 'approvals' })).find((m) => m.message_id === id)!;
    assert.deepEqual(msg.reactions, [], 'no reaction was kept');
    assert.equal(getProposal(f.app.engine.db, proposal.proposal_id as number)!.status, 'pending');
  });

  it("the owner's reject creates no task, marks the proposal rejected and DMs the proposer the reason", async () => {
    const id = proposal.proposal_message_id as number;
    const r = await ok(owner, 'react', {
      message_id: id,
      reaction: 'reject',
      metadata: '{"reason":"Split the API reference per endpoint"}',
    });
    assert.equal(r.action, 'added');
    assert.deepEqual(r.reactions, [{ reaction: 'reject', by: 'owner' }], 'the proposal message is marked rejected');
    assert.equal(tasks(goalId).length, 0);
    const p = getProposal(f.app.engine.db, proposal.proposal_id as number)!;
    assert.equal(p.status, 'rejected');
    assert.equal(p.reason, 'Split the API reference per endpoint');
    assert.equal(p.decidedBy, 'owner');

    const inbox = (await ok(coord, 'read_inbox')).messages as Msg[];
    const dm = inbox.find((m) => m.from === 'system' && m.body.includes('Split the API reference per endpoint'));
    assert.ok(dm, `the coordinator got the reason: ${JSON.stringify(inbox)}`);
    assert.match(dm.body, new RegExp(`proposal #${proposal.proposal_id as number}`));
    const snap = await goalOf(owner, goalId);
    assert.equal(snap.goal.status, 'draft');
    assert.equal(snap.goal.pending_proposal_id, null);
  });

  it('whoever proposed gets the rejection DM (here: the owner)', async () => {
    const g = await newGoal(owner);
    const p = await ok(owner, 'propose_task_tree', { goal_id: g.goal_id, tree: leaf('Owner plan') });
    await ok(owner, 'react', {
      message_id: p.proposal_message_id as number,
      reaction: 'reject',
      metadata: '{"reason":"Too vague for now"}',
    });
    const inbox = (await ok(owner, 'read_inbox')).messages as Msg[];
    assert.ok(
      inbox.some((m) => m.from === 'system' && m.body.includes('Too vague for now')),
      JSON.stringify(inbox),
    );
    const coordInbox = (await ok(coord, 'read_inbox', { include_read: true })).messages as Msg[];
    assert.ok(!coordInbox.some((m) => m.body.includes('Too vague for now')), 'not the coordinator');
  });

  it("after a rejection the coordinator may propose again; the owner's approve materializes every task atomically", async () => {
    proposal = await ok(coord, 'propose_task_tree', { goal_id: goalId, reasoning: 'Revised.', tree: TREE });
    assert.equal(proposal.status, 'pending');
    const head = f.app.engine.head().position;
    const r = await ok(owner, 'react', { message_id: proposal.proposal_message_id as number, reaction: 'approve' });
    assert.equal(r.action, 'added');

    const created = tasks(goalId);
    assert.equal(created.length, 4);
    const [root, child1, grandchild, child2] = created;
    assert.deepEqual(
      created.map((t) => t.title),
      ['Audit the docs', 'Audit the install guide', 'Run the install steps', 'Audit the API reference'],
    );
    assert.ok(created.every((t) => t.status === 'approved'));
    assert.deepEqual(
      created.map((t) => t.parentId),
      [null, root!.taskId, child1!.taskId, root!.taskId],
    );
    assert.deepEqual(
      created.map((t) => t.depth),
      [0, 1, 2, 1],
    );
    assert.deepEqual(root!.ancestry, []);
    assert.deepEqual(child1!.ancestry, [
      { id: root!.taskId, title: 'Audit the docs', acceptance_criteria: 'Every page checked' },
    ]);
    assert.deepEqual(
      grandchild!.ancestry,
      [
        { id: root!.taskId, title: 'Audit the docs', acceptance_criteria: 'Every page checked' },
        { id: child1!.taskId, title: 'Audit the install guide', acceptance_criteria: 'Install steps run clean' },
      ],
      "the grandchild's ancestry is [root, child-1]",
    );
    assert.deepEqual(child2!.ancestry, child1!.ancestry);
    assert.deepEqual(
      created.map((t) => t.billingCode),
      ['default', 'docs', 'docs', 'default'],
      'billing codes are inherited',
    );
    assert.ok(created.every((t) => t.proposalId === proposal.proposal_id));

    const events = eventsAfter(head);
    assert.deepEqual(new Set(events.map((e) => e.meta.commandId)).size, 1, 'one command: all or nothing');
    assert.equal(events.filter((e) => e.type === 'TaskCreated').length, 4);
    assert.ok(events.some((e) => e.type === 'ProposalApproved'));
    assert.ok(events.some((e) => e.type === 'GoalActivated'));
    assert.equal(getProposal(f.app.engine.db, proposal.proposal_id as number)!.status, 'approved');

    const snap = await goalOf(owner, goalId);
    assert.equal(snap.goal.status, 'active', 'draft → active');
    assert.equal(snap.goal.pending_proposal_id, null);
    assert.equal(snap.tasks_tree.length, 1);
    const tree = snap.tasks_tree[0]!;
    assert.equal(tree.id, root!.taskId);
    assert.deepEqual(
      tree.children.map((c) => c.title),
      ['Audit the install guide', 'Audit the API reference'],
    );
    assert.deepEqual(
      tree.children[0]!.children.map((c) => [c.title, c.depth, c.ancestry.length]),
      [['Run the install steps', 2, 2]],
    );
  });

  it('posts one system message per task transition to the goal channel (its id, title, old and new status, and actor)', async () => {
    const created = tasks(goalId);
    let channel = await messages(owner, { channel_id: goalChannel });
    for (const t of created) {
      const notes = channel.filter((m) => m.kind === 'system' && m.metadata?.task_id === t.taskId);
      assert.equal(notes.length, 1, `one message for task ${t.taskId}`);
      assert.equal(notes[0]!.from, 'system');
      assert.equal(notes[0]!.body, `Task #${t.taskId} "${t.title}": (new) → approved by owner`);
      assert.deepEqual(
        [notes[0]!.metadata?.from, notes[0]!.metadata?.to, notes[0]!.metadata?.actor],
        [null, 'approved', 'owner'],
      );
    }
    assert.ok(channel.some((m) => m.metadata?.event === 'GoalActivated' && /draft → active/.test(m.body)));

    const grandchild = created[2]!;
    await ok(worker, 'claim_task', { task_id: grandchild.taskId });
    channel = await messages(owner, { channel_id: goalChannel });
    const notes = channel.filter((m) => m.metadata?.task_id === grandchild.taskId);
    assert.equal(notes.length, 2, 'one more message for the claim');
    assert.equal(notes[1]!.body, `Task #${grandchild.taskId} "Run the install steps": approved → claimed by worker`);
  });

  it('a reaction on a decided proposal decides nothing again', async () => {
    const head = f.app.engine.head().position;
    await ok(owner, 'react', {
      message_id: proposal.proposal_message_id as number,
      reaction: 'reject',
      metadata: '{"reason":"too late"}',
    });
    assert.equal(getProposal(f.app.engine.db, proposal.proposal_id as number)!.status, 'approved');
    assert.equal(tasks(goalId).length, 4);
    assert.ok(!eventsAfter(head).some((e) => e.type === 'ProposalRejected' || e.type.startsWith('Task')));
  });

  it("the goal's owner may also approve a proposal made by the owner", async () => {
    const g = await newGoal(owner);
    const p = await ok(owner, 'propose_task_tree', { goal_id: g.goal_id, tree: leaf('Small plan') });
    await ok(owner, 'react', { message_id: p.proposal_message_id as number, reaction: 'approve' });
    assert.equal(tasks(g.goal_id).length, 1);
    assert.equal((await goalOf(owner, g.goal_id)).goal.status, 'active');
  });

  it('refuses a tree whose ancestry would exceed 16 KiB (ErrAncestryOverflow) before anything is posted', async () => {
    const g = await newGoal(owner);
    const fits = {
      ...leaf('Root'),
      children: [{ ...leaf('Child'), acceptance_criteria: 'z'.repeat(15_000), children: [leaf('Leaf')] }],
    };
    const big = {
      ...leaf('Root'),
      children: [
        {
          ...leaf('Child'),
          acceptance_criteria: 'z'.repeat(9_000),
          children: [{ ...leaf('Grandchild'), acceptance_criteria: 'z'.repeat(9_000), children: [leaf('Leaf')] }],
        },
      ],
    };
    assert.match(
      await refused(f, owner, 'propose_task_tree', { goal_id: g.goal_id, tree: big }, 'ErrAncestryOverflow'),
      /tree\.children\[0\]\.children\[0\]\.children\[0\]/,
    );
    assert.equal(tasks(g.goal_id).length, 0);
    await ok(owner, 'propose_task_tree', { goal_id: g.goal_id, tree: fits });
  });
});

describe('approval_mode auto', () => {
  it('approves at once: status approved in the output, tasks exist, ProposalApproved by system', async () => {
    const g = await newGoal(owner, { approval_mode: 'auto' });
    assert.equal((await goalOf(owner, g.goal_id)).goal.approval_mode, 'auto');
    const head = f.app.engine.head().position;
    const p = await ok(coord, 'propose_task_tree', { goal_id: g.goal_id, tree: TREE });
    assert.equal(p.status, 'approved');
    const created = tasks(g.goal_id);
    assert.deepEqual(
      p.task_ids,
      created.map((t) => t.taskId),
    );
    assert.equal(created.length, 4);
    assert.ok(created.every((t) => t.status === 'approved'));
    const approved = eventsAfter(head).find((e) => e.type === 'ProposalApproved')!;
    assert.ok(approved, 'the approval is recorded');
    assert.equal(approved.meta.actor, 'system');
    assert.deepEqual((approved.data as { by: { name: string }; auto: boolean }).by.name, 'system');
    assert.equal((approved.data as { auto: boolean }).auto, true);
    assert.equal(getProposal(f.app.engine.db, p.proposal_id as number)!.status, 'approved');
    assert.equal((await goalOf(owner, g.goal_id)).goal.status, 'active');
    const channel = await messages(owner, { channel_id: g.channel_id });
    assert.ok(
      channel.some((m) => m.body === `Task #${created[0]!.taskId} "Audit the docs": (new) → approved by system`),
    );
  });
});

describe('large trees', () => {
  const wide = (n: number): Body => ({
    ...leaf('Root of a wide tree'),
    children: Array.from({ length: n }, (_, i) =>
      leaf(`Part ${i + 1} of the wide tree, with a long enough title to list`),
    ),
  });

  it('lists as much of a 600-task tree as fits in one message; the whole tree is in its metadata and approval creates every task', async () => {
    const g = await newGoal(owner, { approval_mode: 'auto' });
    const p = await ok(coord, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: { ...wide(400), children: [...(wide(400).children as Body[]), wide(198)] },
    });
    assert.equal((p.task_ids as number[]).length, 600);
    const [proposal] = (await messages(owner, { channel_name: 'approvals' })).filter(
      (m) => m.message_id === p.proposal_message_id,
    );
    assert.ok(proposal!.body.length <= 16_000);
    assert.match(proposal!.body, /… and \d+ more tasks \(the whole tree is in this message's metadata\)/);
    assert.equal(
      (proposal as unknown as { metadata: { tree: { children: { children: unknown[] }[] } } }).metadata.tree
        .children[400]!.children.length,
      198,
    );
  });

  it('refuses a tree of more than 2,000 tasks with ErrInvalidInput', async () => {
    const g = await newGoal(owner);
    const text = await refused(
      f,
      coord,
      'propose_task_tree',
      { goal_id: g.goal_id, tree: { ...wide(400), children: Array.from({ length: 5 }, () => wide(400)) } },
      'ErrInvalidInput',
    );
    assert.match(text, /at most 2000 tasks; this one has 2006/);
  });
});

describe('budget cascade (ErrBudgetInsufficient)', () => {
  let goalId: number;
  before(async () => {
    goalId = (await newGoal(owner, { budget_dollars_cents: 1000, budget_tokens: 10_000 })).goal_id;
  });
  const propose = (tree: Body) => ({ goal_id: goalId, tree });

  it("a root over the goal's budget", async () => {
    assert.match(
      await refused(
        f,
        owner,
        'propose_task_tree',
        propose(leaf('Root', { budget_dollars_cents: 1001 })),
        'ErrBudgetInsufficient',
      ),
      /tree\.budget_dollars_cents is 1001 but only 1000/,
    );
    assert.match(
      await refused(
        f,
        owner,
        'propose_task_tree',
        propose(leaf('Root', { budget_tokens: 10_001 })),
        'ErrBudgetInsufficient',
      ),
      /tree\.budget_tokens/,
    );
  });

  it('a child over what its parent has', async () => {
    const tree = {
      ...leaf('Root', { budget_dollars_cents: 500 }),
      children: [leaf('Child', { budget_dollars_cents: 501 })],
    };
    assert.match(
      await refused(f, owner, 'propose_task_tree', propose(tree), 'ErrBudgetInsufficient'),
      /tree\.children\[0\]\.budget_dollars_cents is 501 but only 500/,
    );
  });

  it("siblings share their parent's budget", async () => {
    const tree = {
      ...leaf('Root', { budget_dollars_cents: 500 }),
      children: [leaf('First', { budget_dollars_cents: 300 }), leaf('Second', { budget_dollars_cents: 201 })],
    };
    assert.match(
      await refused(f, owner, 'propose_task_tree', propose(tree), 'ErrBudgetInsufficient'),
      /tree\.children\[1\]\.budget_dollars_cents is 201 but only 200/,
    );
  });

  it('children of an unbudgeted node draw on the nearest budgeted ancestor', async () => {
    const tree = {
      ...leaf('Root', { budget_tokens: 1000 }),
      children: [
        {
          ...leaf('Middle'),
          children: [leaf('Part A', { budget_tokens: 600 }), leaf('Part B', { budget_tokens: 401 })],
        },
      ],
    };
    assert.match(
      await refused(f, owner, 'propose_task_tree', propose(tree), 'ErrBudgetInsufficient'),
      /tree\.children\[0\]\.children\[1\]\.budget_tokens is 401 but only 400/,
    );
  });

  it('a tree that fits exactly is accepted; a later tree gets what the first one left', async () => {
    const tree = {
      ...leaf('Root', { budget_dollars_cents: 600 }),
      children: [leaf('First', { budget_dollars_cents: 300 }), leaf('Second', { budget_dollars_cents: 300 })],
    };
    const p = await ok(owner, 'propose_task_tree', propose(tree));
    await ok(owner, 'react', { message_id: p.proposal_message_id as number, reaction: 'approve' });
    assert.deepEqual(
      tasks(goalId).map((t) => t.budgetCents),
      [600, 300, 300],
    );
    assert.match(
      await refused(
        f,
        owner,
        'propose_task_tree',
        propose(leaf('Next', { budget_dollars_cents: 401 })),
        'ErrBudgetInsufficient',
      ),
      /only 400/,
    );
    await ok(owner, 'propose_task_tree', propose(leaf('Next', { budget_dollars_cents: 400 })));
  });
});

describe('complete_goal', () => {
  let goalId: number;
  before(async () => {
    goalId = (await newGoal(owner)).goal_id;
  });

  it('another agent of the tenant may not (ErrForbidden)', async () => {
    await refused(
      f,
      worker,
      'complete_goal',
      { goal_id: goalId, status: 'completed', summary: 'done' },
      'ErrForbidden',
    );
  });

  it('the coordinator may; the same status again changes nothing; the owner resumes a stuck goal', async () => {
    assert.deepEqual(
      await ok(coord, 'complete_goal', { goal_id: goalId, status: 'stuck', summary: 'Blocked on credentials' }),
      { goal_id: goalId, status: 'stuck' },
    );
    const head = f.app.engine.head().position;
    assert.deepEqual(await ok(owner, 'complete_goal', { goal_id: goalId, status: 'stuck', summary: 'still blocked' }), {
      goal_id: goalId,
      status: 'stuck',
    });
    assert.equal(f.app.engine.head().position, head, 'idempotent: nothing appended');
    const snap = await goalOf(owner, goalId);
    assert.equal(snap.goal.completion_summary, 'Blocked on credentials');
    assert.ok(
      snap.recent_events.some(
        (e) =>
          e.event === 'GoalClosed' && /draft → stuck by coordinator: Blocked on credentials/.test(e.body as string),
      ),
    );
    assert.deepEqual(await ok(owner, 'resume_goal', { goal_id: goalId }), { goal_id: goalId, status: 'active' });
  });

  it('the owner completes it; completed is final (ErrIllegalTransition), completed again is a no-op', async () => {
    assert.deepEqual(
      await ok(owner, 'complete_goal', { goal_id: goalId, status: 'completed', summary: 'All pages accurate' }),
      { goal_id: goalId, status: 'completed' },
    );
    const snap = await goalOf(owner, goalId);
    assert.equal(snap.goal.status, 'completed');
    assert.equal(snap.goal.completion_summary, 'All pages accurate');
    assert.ok(snap.goal.completed_at);
    for (const status of ['stuck', 'cancelled']) {
      await refused(f, owner, 'complete_goal', { goal_id: goalId, status, summary: 'x' }, 'ErrIllegalTransition');
      await refused(f, coord, 'complete_goal', { goal_id: goalId, status, summary: 'x' }, 'ErrIllegalTransition');
    }
    await refused(f, owner, 'resume_goal', { goal_id: goalId }, 'ErrIllegalTransition');
    const head = f.app.engine.head().position;
    assert.deepEqual(await ok(owner, 'complete_goal', { goal_id: goalId, status: 'completed', summary: 'again' }), {
      goal_id: goalId,
      status: 'completed',
    });
    assert.equal(f.app.engine.head().position, head);
    await refused(f, coord, 'propose_task_tree', { goal_id: goalId, tree: leaf('Late plan') }, 'ErrGoalClosed');
  });

  it('a cancelled goal is final too', async () => {
    const g = await newGoal(owner);
    await ok(owner, 'complete_goal', { goal_id: g.goal_id, status: 'cancelled', summary: 'Not needed' });
    await refused(
      f,
      owner,
      'complete_goal',
      { goal_id: g.goal_id, status: 'completed', summary: 'x' },
      'ErrIllegalTransition',
    );
  });
});

describe('resume_goal (owner surface)', () => {
  it('is listed for the owner only; an agent cannot call it', async () => {
    const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name);
    assert.ok((await names(owner)).includes('resume_goal'));
    assert.ok(!(await names(worker)).includes('resume_goal'));
    assert.ok(!(await names(coord)).includes('resume_goal'));
    for (const t of ['create_goal', 'propose_task_tree', 'get_goal', 'list_goals', 'complete_goal'])
      assert.ok((await names(worker)).includes(t), t);
    const g = await newGoal(owner);
    await refused(f, worker, 'resume_goal', { goal_id: g.goal_id }, 'ErrToolNotFound');
  });

  it('a draft goal cannot be resumed; an active one without new budgets is unchanged', async () => {
    const g = await newGoal(owner);
    await refused(f, owner, 'resume_goal', { goal_id: g.goal_id }, 'ErrIllegalTransition');
    const p = await ok(owner, 'propose_task_tree', { goal_id: g.goal_id, tree: leaf('Plan') });
    await ok(owner, 'react', { message_id: p.proposal_message_id as number, reaction: 'approve' });
    const head = f.app.engine.head().position;
    assert.deepEqual(await ok(owner, 'resume_goal', { goal_id: g.goal_id }), { goal_id: g.goal_id, status: 'active' });
    assert.equal(f.app.engine.head().position, head);
  });

  it('resumes a goal paused at its budget only with a higher budget', async () => {
    const g = await newGoal(owner, { budget_dollars_cents: 100 });
    const p = await ok(owner, 'propose_task_tree', { goal_id: g.goal_id, tree: leaf('Paid work') });
    await ok(owner, 'react', { message_id: p.proposal_message_id as number, reaction: 'approve' });
    const [task] = tasks(g.goal_id);
    await ok(worker, 'claim_task', { task_id: task!.taskId });
    const usage = await ok(worker, 'report_usage', { task_id: task!.taskId, tokens: 10, cost_cents: 100 });
    assert.equal(usage.goal_status, 'paused');
    assert.equal((await goalOf(owner, g.goal_id)).goal.status, 'paused');
    await refused(f, owner, 'resume_goal', { goal_id: g.goal_id }, 'ErrGoalBudgetExceeded');
    await refused(
      f,
      owner,
      'resume_goal',
      { goal_id: g.goal_id, new_budget_dollars_cents: 100 },
      'ErrGoalBudgetExceeded',
    );
    assert.deepEqual(await ok(owner, 'resume_goal', { goal_id: g.goal_id, new_budget_dollars_cents: 500 }), {
      goal_id: g.goal_id,
      status: 'active',
    });
    const snap = await goalOf(owner, g.goal_id);
    assert.equal(snap.goal.budget_dollars_cents, 500);
    assert.equal(snap.goal.spent_dollars_cents, 100);
  });
});

describe('get_goal and list_goals', () => {
  let goalId: number;
  before(async () => {
    goalId = (await newGoal(owner, { budget_tokens: 100_000 })).goal_id;
    const p = await ok(coord, 'propose_task_tree', { goal_id: goalId, tree: TREE });
    await ok(owner, 'react', { message_id: p.proposal_message_id as number, reaction: 'approve' });
    const grandchild = tasks(goalId)[2]!;
    await ok(worker, 'claim_task', { task_id: grandchild.taskId });
    await ok(worker, 'report_usage', { task_id: grandchild.taskId, tokens: 1200, cost_cents: 7 });
  });

  it('returns the snapshot sections: goal, tasks_tree, spawned_agents, cost_breakdown, recent_events', async () => {
    const snap = await goalOf(worker, goalId);
    assert.deepEqual(Object.keys(snap).sort(), [
      'cost_breakdown',
      'goal',
      'recent_events',
      'spawned_agents',
      'tasks_tree',
    ]);
    assert.equal(snap.goal.id, goalId);
    assert.equal(snap.goal.status, 'active');
    assert.equal(snap.goal.spent_tokens, 1200);
    assert.equal(snap.goal.spent_dollars_cents, 7);
    assert.equal(snap.goal.task_count, 4);
    assert.deepEqual(snap.goal.percent_budget, { tokens: 1.2, dollars_cents: null });

    const root = snap.tasks_tree[0] as Node & { rollup: Body };
    assert.deepEqual(root.rollup, { tokens: 1200, dollars_cents: 7, task_count: 4 }, 'the root rolls up its subtree');
    const gc = root.children[0]!.children[0] as Node & { assignee: Body; spent_tokens: number };
    assert.deepEqual(gc.assignee, { id: f.agent.agentId, name: 'worker' });
    assert.equal(gc.status, 'claimed');
    assert.equal(gc.spent_tokens, 1200);

    const agents = snap.spawned_agents as { id: number; name: string; role: string; tasks: number[] }[];
    assert.deepEqual(
      agents.map((a) => [a.name, a.role]),
      [
        ['coordinator', 'coordinator'],
        ['worker', 'specialist'],
      ],
    );
    assert.deepEqual(agents[1]!.tasks, [gc.id]);

    const cost = snap.cost_breakdown as { total: Body; by_billing_code: Body[] };
    assert.deepEqual(cost.total, { tokens: 1200, dollars_cents: 7, task_count: 4 });
    assert.deepEqual(cost.by_billing_code, [
      { billing_code: 'default', tokens: 0, dollars_cents: 0, task_count: 2 },
      { billing_code: 'docs', tokens: 1200, dollars_cents: 7, task_count: 2 },
    ]);

    const events = snap.recent_events as {
      id: number;
      from: string;
      body: string;
      kind: string;
      event: string | null;
    }[];
    assert.equal(events.filter((e) => e.event === 'TaskCreated').length, 4);
    assert.ok(events.some((e) => e.event === 'GoalActivated'));
    assert.ok(events.some((e) => e.event === 'TaskClaimed' || /approved → claimed by worker/.test(e.body)));
    assert.ok(events.every((e) => e.kind === 'system' && e.from === 'system'));
  });

  it("lists the tenant's goals newest first with a status filter", async () => {
    const all = await ok(worker, 'list_goals', { limit: 200 });
    const goals = all.goals as { id: number; status: string; task_count: number; owner_user_id: number }[];
    assert.equal(all.total, goals.length);
    assert.deepEqual(
      goals.map((g) => g.id),
      [...goals.map((g) => g.id)].sort((a, b) => b - a),
      'newest first',
    );
    assert.ok(
      goals.every((g) => g.owner_user_id === f.owner.userId),
      'only my tenant',
    );
    assert.equal(goals.find((g) => g.id === goalId)!.task_count, 4);

    for (const status of ['draft', 'active', 'completed', 'cancelled', 'stuck', 'paused']) {
      const filtered = await ok(owner, 'list_goals', { status, limit: 200 });
      const rows = filtered.goals as { status: string }[];
      assert.ok(
        rows.every((g) => g.status === status),
        status,
      );
      assert.equal(filtered.total, goals.filter((g) => g.status === status).length, status);
    }
    assert.ok(((await ok(owner, 'list_goals', { status: 'completed' })).goals as unknown[]).length >= 1);
    assert.ok(
      ((await ok(owner, 'list_goals', { status: 'active' })).goals as { id: number }[]).some((g) => g.id === goalId),
    );
    assert.ok(
      !((await ok(owner, 'list_goals', { status: 'draft', limit: 200 })).goals as { id: number }[]).some(
        (g) => g.id === goalId,
      ),
    );

    const page = await ok(owner, 'list_goals', { limit: 2, offset: 1 });
    assert.deepEqual(
      (page.goals as { id: number }[]).map((g) => g.id),
      goals.slice(1, 3).map((g) => g.id),
    );
    assert.equal(page.total, all.total);
  });
});

describe('tenant isolation', () => {
  let goalId: number;
  let messageId: number;
  before(async () => {
    goalId = (await newGoal(owner)).goal_id;
    messageId = (await ok(owner, 'propose_task_tree', { goal_id: goalId, tree: leaf('Private plan') }))
      .proposal_message_id as number;
  });

  it('another owner and its agents see ErrGoalNotFound for my goal, and cannot decide my proposal', async () => {
    for (const c of [otherOwner, outsider]) {
      await refused(f, c, 'get_goal', { goal_id: goalId }, 'ErrGoalNotFound');
      await refused(f, c, 'propose_task_tree', { goal_id: goalId, tree: leaf('Hostile plan') }, 'ErrGoalNotFound');
      await refused(
        f,
        c,
        'complete_goal',
        { goal_id: goalId, status: 'cancelled', summary: 'mine now' },
        'ErrGoalNotFound',
      );
      await refused(f, c, 'react', { message_id: messageId, reaction: 'approve' }, 'ErrNotFound');
    }
    await refused(f, otherOwner, 'resume_goal', { goal_id: goalId }, 'ErrGoalNotFound');
    const theirs = (await ok(otherOwner, 'list_goals', { limit: 200 })).goals as {
      id: number;
      owner_user_id: number;
    }[];
    assert.ok(!theirs.some((g) => g.id === goalId));
    assert.ok(theirs.every((g) => g.owner_user_id !== f.owner.userId));
    assert.equal(getProposal(f.app.engine.db, getProposalIdOf(messageId))!.status, 'pending');
  });

  it("a peer verifier must be an agent of the goal's owner (ErrNotFound otherwise)", async () => {
    const g = await newGoal(owner);
    await refused(
      f,
      owner,
      'propose_task_tree',
      { goal_id: g.goal_id, tree: leaf('Plan', { verifier_config: { kind: 'peer', agent_id: outsiderId } }) },
      'ErrNotFound',
    );
    const p = await ok(owner, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: leaf('Plan', { verifier_config: { kind: 'peer', agent_id: f.agent.agentId } }),
    });
    assert.equal(p.status, 'pending');
  });
});

function getProposalIdOf(messageId: number): number {
  return (
    f.app.engine.db.prepare('SELECT proposal_id FROM proposals WHERE message_id = ?').get(messageId) as {
      proposal_id: number;
    }
  ).proposal_id;
}

describe('bad input appends nothing', () => {
  let goalId = 0;
  let messageId = 0;
  before(async () => {
    goalId = (await newGoal(owner)).goal_id;
    messageId = (await ok(owner, 'propose_task_tree', { goal_id: goalId, tree: leaf('Pending plan') }))
      .proposal_message_id as number;
  });
  const goal = (b: Body = {}) => ({ title: 'A valid title', description: DESCRIPTION, ...b });
  const node = (b: Body = {}) => ({ ...leaf('Valid node'), ...b });
  type Case = [who: 'owner' | 'worker', tool: string, args: () => Body, code: string];
  const cases: Case[] = [
    // create_goal
    ['owner', 'create_goal', () => ({}), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => ({ title: 'A valid title' }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => ({ description: DESCRIPTION }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ title: 'ab' }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ title: '   ab   ' }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ title: 'x'.repeat(201) }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ title: 42 }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ description: 'too short' }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ description: 'x'.repeat(16_001) }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ max_spawn_depth: 11 }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ max_spawn_depth: 0 }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ max_spawn_depth: 2.5 }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ max_spawn_depth: '3' }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ budget_dollars_cents: -1 }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ budget_tokens: -100 }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ budget_tokens: '100' }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ budget_dollars_cents: 1.5 }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ approval_mode: 'yolo' }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ coordinator_config: '' }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ priority: 1 }), 'ErrInvalidInput'],
    ['owner', 'create_goal', () => goal({ coordinator_config: 'nobody' }), 'ErrNotFound'],
    ['worker', 'create_goal', () => goal({ max_spawn_depth: 11 }), 'ErrInvalidInput'],
    // propose_task_tree
    ['owner', 'propose_task_tree', () => ({}), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId }), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ tree: node() }), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ goal_id: String(goalId), tree: node() }), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ goal_id: 0, tree: node() }), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId, tree: JSON.stringify(node()) }), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId, tree: node(), reasoning: 7 }), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId, tree: node(), extra: true }), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId, tree: node({ title: 'ab' }) }), 'ErrInvalidInput'],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ description: 'short' }) }),
      'ErrInvalidInput',
    ],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId, tree: { title: 'Only a title' } }), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId, tree: node({ owner: 'me' }) }), 'ErrInvalidInput'],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ children: [node({ children: [node({ surprise: 1 })] })] }) }),
      'ErrInvalidInput',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ children: [node({ title: 12345 })] }) }),
      'ErrInvalidInput',
    ],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId, tree: node({ children: node() }) }), 'ErrInvalidInput'],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId, tree: node({ budget_tokens: -1 }) }), 'ErrInvalidInput'],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ children: [node({ budget_dollars_cents: -5 })] }) }),
      'ErrInvalidInput',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'peer' } }) }),
      'ErrInvalidInput',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'peer', agent_id: 'worker' } }) }),
      'ErrInvalidInput',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'magic' } }) }),
      'ErrInvalidInput',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'auto', agent_id: 1 } }) }),
      'ErrInvalidInput',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'command' } }) }),
      'ErrInvalidInput',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'command', recipe: '' } }) }),
      'ErrInvalidInput',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'command', recipe: 'x', extra: 1 } }) }),
      'ErrInvalidInput',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'command', cmd: '   ' } }) }),
      'ErrRawCommandRefused',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'command', recipe: 'x', timeout_sec: 0 } }) }),
      'ErrRawCommandRefused',
    ],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ heartbeat_config: { interval_sec: 5 } }) }),
      'ErrInvalidInput',
    ],
    ['owner', 'propose_task_tree', () => ({ goal_id: 999_999, tree: node() }), 'ErrGoalNotFound'],
    ['owner', 'propose_task_tree', () => ({ goal_id: goalId, tree: node() }), 'ErrProposalPending'],
    [
      'owner',
      'propose_task_tree',
      () => ({ goal_id: goalId, tree: node({ verifier_config: { kind: 'command', recipe: 'x', cwd: '/' } }) }),
      'ErrPathOutsideRoots',
    ],
    ['worker', 'propose_task_tree', () => ({ goal_id: goalId, tree: node({ extra: 1 }) }), 'ErrInvalidInput'],
    // get_goal
    ['worker', 'get_goal', () => ({}), 'ErrInvalidInput'],
    ['worker', 'get_goal', () => ({ goal_id: 'one' }), 'ErrInvalidInput'],
    ['worker', 'get_goal', () => ({ goal_id: -1 }), 'ErrInvalidInput'],
    ['worker', 'get_goal', () => ({ goal_id: goalId, verbose: true }), 'ErrInvalidInput'],
    ['worker', 'get_goal', () => ({ goal_id: 999_999 }), 'ErrGoalNotFound'],
    // list_goals
    ['worker', 'list_goals', () => ({ status: 'done' }), 'ErrInvalidInput'],
    ['worker', 'list_goals', () => ({ limit: 0 }), 'ErrInvalidInput'],
    ['worker', 'list_goals', () => ({ limit: 201 }), 'ErrInvalidInput'],
    ['worker', 'list_goals', () => ({ offset: -1 }), 'ErrInvalidInput'],
    ['worker', 'list_goals', () => ({ limit: '10' }), 'ErrInvalidInput'],
    ['worker', 'list_goals', () => ({ owner: 'other-owner' }), 'ErrInvalidInput'],
    // complete_goal
    ['owner', 'complete_goal', () => ({ goal_id: goalId }), 'ErrInvalidInput'],
    ['owner', 'complete_goal', () => ({ goal_id: goalId, status: 'completed' }), 'ErrInvalidInput'],
    ['owner', 'complete_goal', () => ({ goal_id: goalId, status: 'done', summary: 'x' }), 'ErrInvalidInput'],
    ['owner', 'complete_goal', () => ({ goal_id: goalId, status: 'active', summary: 'x' }), 'ErrInvalidInput'],
    ['owner', 'complete_goal', () => ({ goal_id: goalId, status: 'completed', summary: '   ' }), 'ErrInvalidInput'],
    [
      'owner',
      'complete_goal',
      () => ({ goal_id: goalId, status: 'completed', summary: 'x', extra: 1 }),
      'ErrInvalidInput',
    ],
    ['owner', 'complete_goal', () => ({ goal_id: 999_999, status: 'completed', summary: 'x' }), 'ErrGoalNotFound'],
    ['worker', 'complete_goal', () => ({ goal_id: 999_999, status: 'completed', summary: 'x' }), 'ErrGoalNotFound'],
    // resume_goal
    ['owner', 'resume_goal', () => ({}), 'ErrInvalidInput'],
    ['owner', 'resume_goal', () => ({ goal_id: goalId, new_budget_tokens: -1 }), 'ErrInvalidInput'],
    ['owner', 'resume_goal', () => ({ goal_id: goalId, new_budget_dollars_cents: 'lots' }), 'ErrInvalidInput'],
    ['owner', 'resume_goal', () => ({ goal_id: goalId, budget_tokens: 5 }), 'ErrInvalidInput'],
    ['owner', 'resume_goal', () => ({ goal_id: 999_999 }), 'ErrGoalNotFound'],
    // react on a proposal
    ['owner', 'react', () => ({ message_id: messageId, reaction: 'reject', metadata: 'not json' }), 'ErrInvalidInput'],
    ['owner', 'react', () => ({ message_id: messageId, reaction: 'veto' }), 'ErrInvalidInput'],
    ['owner', 'react', () => ({ message_id: 999_999, reaction: 'approve' }), 'ErrNotFound'],
  ];
  for (const [who, tool, args, code] of cases) {
    it(`${who}: ${tool}(${JSON.stringify(args()).slice(0, 140)}) → ${code}`, async () => {
      await refused(f, who === 'owner' ? owner : worker, tool, args(), code);
    });
  }

  it('a peer verifier naming an agent that does not exist → ErrNotFound', async () => {
    const g = await newGoal(owner);
    await refused(
      f,
      owner,
      'propose_task_tree',
      {
        goal_id: g.goal_id,
        tree: node({ children: [node({ verifier_config: { kind: 'peer', agent_id: 999_999 } })] }),
      },
      'ErrNotFound',
    );
  });
});
