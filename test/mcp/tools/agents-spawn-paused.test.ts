import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { proposalDecider, type ProposeAgent } from '../../../src/commands/proposals.js';
import { GOAL_STATUSES, type GoalStatus } from '../../../src/events/goals.js';
import { ok, refused } from '../../helpers/calls.js';
import { spec } from '../../helpers/decider-spec.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';

/**
 * A paused goal refuses new spawns: propose_agent on a goal paused for budget
 * is refused like claim_task there — ErrGoalBudgetExceeded, nothing written — until the owner resumes it;
 * on a completed or cancelled goal it is ErrGoalClosed. The rule is the proposal decider's, with the
 * goal's status as a fact.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;

const proposeAgent = (goalStatus: GoalStatus): ProposeAgent => ({
  type: 'ProposeAgent',
  goalStatus,
  proposal: {
    proposalId: 5,
    goalId: 7,
    ownerId: 1,
    parentTaskId: 9,
    proposer: { key: 'agent-2', name: 'lead', agentId: 2 },
    reason: 'a dedicated writer',
    agent: {
      name: 'writer',
      model: 'm',
      systemPrompt: 'You write.',
      toolScope: ['whoami'],
      skills: [],
      mcpServers: [],
      subagents: [],
      tier: 'supervised',
    },
    messageId: 11,
    channelId: 3,
  },
  spawn: {
    parent: {
      agentId: 2,
      name: 'lead',
      tier: 'assisted',
      toolScope: ['whoami'],
      spawnDepth: 0,
      ownCommand: null,
      ownRuntime: null,
    },
    maxSpawnDepth: 3,
    names: { ownerName: 'owner', taken: false },
  },
});

describe('the proposal decider: spawning needs a running goal', () => {
  it('draft, active and stuck goals take proposals; paused is ErrGoalBudgetExceeded; completed and cancelled are ErrGoalClosed', () => {
    for (const status of GOAL_STATUSES) {
      const when = spec(proposalDecider).given([]).when(proposeAgent(status));
      if (status === 'paused')
        when.thenThrows(
          'ErrGoalBudgetExceeded',
          'goal 7 is paused: no new agents are spawned until the owner resumes it',
        );
      else if (status === 'completed' || status === 'cancelled')
        when.thenThrows('ErrGoalClosed', `goal 7 is ${status}: it takes no new agents`);
      else when.then([{ type: 'AgentProposed', data: proposeAgent(status).proposal }]);
    }
  });
});

interface World {
  f: McpFixture;
  owner: Client;
  worker: Client;
  goalId: number;
  taskIds: number[];
}

/** A goal with a 100¢ budget and two approved tasks; the worker (every agent tool, propose_agent among them) proposes. */
async function world(t: TestContext): Promise<World> {
  const f = await mcpFixture();
  t.after(() => f.close());
  const owner = await f.connect(f.ownerToken);
  const leaf = (title: string) => ({ title, description: `${title}: do it carefully` });
  const g = await ok(owner, 'create_goal', {
    title: 'Docs refresh',
    description: 'Keep the docs accurate.',
    budget_dollars_cents: 100,
  });
  const p = await ok(owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: { ...leaf('Root'), children: [leaf('First page'), leaf('Second page')] },
  });
  await ok(owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' });
  const tree = (await ok(owner, 'get_goal', { goal_id: g.goal_id })).tasks_tree as {
    id: number;
    children: { id: number }[];
  }[];
  return {
    f,
    owner,
    worker: await f.connect(f.agentToken),
    goalId: g.goal_id as number,
    taskIds: [tree[0]!.id, ...tree[0]!.children.map((c) => c.id)],
  };
}

let names = 0;
const proposal = (w: World): Body => ({
  goal_id: w.goalId,
  parent_task_id: w.taskIds[1],
  name: `writer-${(names += 1)}`,
  model: 'claude-sonnet-4-5',
  autonomy_tier: 'supervised',
  system_prompt: `You write reference documentation, one module at a time (writer ${names}).`,
  tool_scope: ['whoami', 'read_inbox'],
  reason: 'The module needs a dedicated writer.',
});

describe('propose_agent on a paused goal (real MCP client)', () => {
  it('is refused like claim_task, writes nothing, and works again once the owner resumes the goal', async (t) => {
    const w = await world(t);
    assert.equal(
      (await ok(w.worker, 'propose_agent', proposal(w))).status,
      'pending',
      'an active goal takes proposals',
    );
    assert.equal(
      (await ok(w.owner, 'report_usage', { task_id: w.taskIds[2], tokens: 0, cost_cents: 100 })).goal_status,
      'paused',
    );
    const text = await refused(w.f, w.worker, 'propose_agent', proposal(w), 'ErrGoalBudgetExceeded');
    assert.match(
      text,
      new RegExp(
        `^ErrGoalBudgetExceeded: goal ${w.goalId} is paused: no new agents are spawned until the owner resumes it`,
      ),
    );
    assert.match(
      await refused(w.f, w.worker, 'claim_task', { task_id: w.taskIds[1] }, 'ErrGoalBudgetExceeded'),
      /the goal is paused/,
      'the same code as a claim',
    );
    await ok(w.owner, 'resume_goal', { goal_id: w.goalId, new_budget_dollars_cents: 500 });
    assert.equal((await ok(w.worker, 'propose_agent', proposal(w))).status, 'pending');
  });

  it('an auto-approval goal spawns nothing while paused either', async (t) => {
    const w = await world(t);
    await ok(w.owner, 'set_goal_approval_mode', { goal_id: w.goalId, approval_mode: 'auto' });
    // Only an autonomous agent's spawns are approved at once in auto mode (autonomy tiers).
    await ok(w.owner, 'update_agent', { agent_id: w.f.agent.agentId, autonomy_tier: 'autonomous' });
    await ok(w.owner, 'report_usage', { task_id: w.taskIds[2], tokens: 0, cost_cents: 100 });
    await refused(w.f, w.worker, 'propose_agent', proposal(w), 'ErrGoalBudgetExceeded');
    await ok(w.owner, 'resume_goal', { goal_id: w.goalId, new_budget_dollars_cents: 500 });
    const spawned = await ok(w.worker, 'propose_agent', proposal(w));
    assert.equal(spawned.status, 'approved');
    assert.equal(typeof spawned.agent_id, 'number');
  });

  it('a closed goal is ErrGoalClosed', async (t) => {
    const w = await world(t);
    await ok(w.owner, 'complete_goal', { goal_id: w.goalId, status: 'cancelled', summary: 'no longer needed' });
    assert.match(
      await refused(w.f, w.worker, 'propose_agent', proposal(w), 'ErrGoalClosed'),
      /is cancelled: it takes no new agents/,
    );
  });
});
