import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { ok, refused } from '../helpers/calls.js';
import { mcpFixture, type McpFixture } from '../helpers/mcp.js';

/**
 * Through a real MCP Client: an agent acts only as itself. A sub-agent can
 * never be named like the owner (or a reserved word) and `to: "owner"` always reaches the person;
 * messages say who wrote them; idempotency keys belong to one principal and one tool; only the
 * assignee, the coordinator and the owner report usage on a task.
 */

async function autoGoal(
  f: McpFixture,
  owner: Client,
  coordinator: string,
): Promise<{ goalId: number; taskIds: number[] }> {
  const g = await ok(owner, 'create_goal', {
    title: `Goal of ${coordinator}`,
    description: 'The owner chose auto approval.',
    coordinator_config: coordinator,
    approval_mode: 'auto',
  });
  const p = await ok(owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: {
      title: 'Root task',
      description: 'The root of the tree.',
      children: [{ title: 'Leaf task', description: 'The leaf somebody works on.' }],
    },
  });
  return { goalId: g.goal_id as number, taskIds: p.task_ids as number[] };
}

async function setup(t: TestContext) {
  const f = await mcpFixture({ ownerName: 'alice' });
  t.after(() => f.close());
  return { f, owner: await f.connect(f.ownerToken), worker: await f.connect(f.agentToken) };
}

describe("no agent can take a person's name, and the owner's mail reaches the owner", () => {
  it("propose_agent and `agents create` refuse the owner's name and reserved words; nothing is written", async (t) => {
    const { f, owner, worker } = await setup(t);
    const { goalId, taskIds } = await autoGoal(f, owner, 'worker');
    for (const name of ['owner', 'alice', 'system', 'colony', 'admin']) {
      await refused(
        f,
        worker,
        'propose_agent',
        {
          goal_id: goalId,
          parent_task_id: taskIds[1],
          name,
          model: 'm',
          system_prompt: 'You help with the leaf task, carefully.',
          tool_scope: ['whoami'],
          autonomy_tier: 'supervised',
          reason: 'impersonate the owner',
        },
        'ErrAgentNameReserved',
      );
    }
    assert.throws(() => f.addAgent('owner'), /ErrAgentNameReserved|reserved/);
    assert.throws(() => f.addAgent('alice'), /reserved/);
  });

  it('`to: "owner"` and the owner\'s name reach the person, and every message says its sender\'s kind', async (t) => {
    const { owner, worker } = await setup(t);
    await ok(worker, 'send_message', { to: 'owner', body: 'for my owner' });
    await ok(worker, 'send_message', { to: 'alice', body: 'for alice' });
    const inbox = (await ok(owner, 'read_inbox', {})).messages as { body: string; from: string; from_kind: string }[];
    assert.deepEqual(
      inbox.map((m) => [m.body, m.from, m.from_kind]),
      [
        ['for my owner', 'worker', 'agent'],
        ['for alice', 'worker', 'agent'],
      ],
    );
    await ok(owner, 'send_message', { to: 'worker', body: 'from the owner' });
    const mine = (await ok(worker, 'read_inbox', {})).messages as { from: string; from_kind: string }[];
    assert.deepEqual(
      mine.map((m) => [m.from, m.from_kind]),
      [['alice', 'user']],
    );
  });
});

describe('an idempotency key belongs to one principal and one tool', () => {
  const KEY = { 'colony/idempotency_key': 'K' };
  const goal = (title: string) => ({ title, description: 'A goal made with an idempotency key.' });

  it("another tenant's agent with the same key gets its own goal, never a stranger's result", async (t) => {
    const { f, worker } = await setup(t);
    const bob = f.addOwner('bob');
    const theirs = await f.connect(f.addAgent('bobs-agent', { ownerId: bob.userId }).token);
    const mine = await ok(worker, 'create_goal', goal('First tenant goal'), KEY);
    const other = await ok(theirs, 'create_goal', goal('Second tenant goal'), KEY);
    assert.notEqual(other.goal_id, mine.goal_id);
    assert.equal(getGoal(f.app.engine.db, other.goal_id as number)!.ownerId, bob.userId, 'its own goal exists');
    assert.equal(getGoal(f.app.engine.db, other.goal_id as number)!.title, 'Second tenant goal');
  });

  it('the same key: same arguments replay the first result; other arguments are ErrIdempotencyConflict; another tool is another key', async (t) => {
    const { f, worker } = await setup(t);
    const first = await ok(worker, 'create_goal', goal('Keyed goal'), KEY);
    const head = f.app.engine.head().position;
    assert.deepEqual(await ok(worker, 'create_goal', goal('Keyed goal'), KEY), first);
    assert.equal(f.app.engine.head().position, head, 'a replay appends nothing');
    await refused(f, worker, 'create_goal', goal('Another goal'), 'ErrIdempotencyConflict', KEY);
    const sent = await ok(worker, 'send_message', { to: 'owner', body: 'keyed message' }, KEY);
    assert.equal(typeof sent.message_id, 'number', "a key on another tool is that tool's own");
  });
});

describe('only the assignee, the coordinator and the owner report usage', () => {
  it('bystanders cannot pause a goal by reporting usage on a task that is not theirs', async (t) => {
    const { f, owner, worker } = await setup(t);
    const bystanders = await Promise.all(['ann', 'ben', 'cid'].map(async (n) => f.connect(f.addAgent(n).token)));
    const coord = await f.connect(f.addAgent('coord').token);
    const g = await ok(owner, 'create_goal', {
      title: 'Budgeted goal',
      description: 'A small budget.',
      coordinator_config: 'coord',
      approval_mode: 'auto',
      budget_dollars_cents: 100,
    });
    const leaf = (
      (
        await ok(owner, 'propose_task_tree', {
          goal_id: g.goal_id,
          tree: {
            title: 'Root task',
            description: 'The root of the tree.',
            children: [{ title: 'Leaf task', description: 'Worked by the worker.' }],
          },
        })
      ).task_ids as number[]
    )[1]!;
    await ok(worker, 'claim_task', { task_id: leaf });
    for (const b of bystanders)
      await refused(f, b, 'report_usage', { task_id: leaf, tokens: 0, cost_cents: 100 }, 'ErrForbidden');
    assert.equal(getGoal(f.app.engine.db, g.goal_id as number)!.status, 'active');
    await ok(worker, 'report_usage', { task_id: leaf, tokens: 10, cost_cents: 10 });
    await ok(coord, 'report_usage', { task_id: leaf, tokens: 10, cost_cents: 10 });
    assert.equal((await ok(owner, 'report_usage', { task_id: leaf, tokens: 0, cost_cents: 80 })).goal_status, 'paused');
  });
});
