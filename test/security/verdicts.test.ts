import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { reputationSettings } from '../../src/actions/reputation.js';
import { getAgent } from '../../src/projections/principal-queries.js';
import { scoreOf } from '../../src/projections/reputation.js';
import { ok, refused } from '../helpers/calls.js';
import { mcpFixture, type McpFixture } from '../helpers/mcp.js';

/**
 * Through a real MCP Client: an agent that verifies its own work farms reputation. A
 * verdict never comes from the worker nor from its spawn lineage: such a peer verifier is refused when
 * proposed (the proposer and its lineage), and a claim by the verifier or its lineage is refused too —
 * so no verdict of the kind is ever recorded and the reputation does not move.
 */

const leaves = (peer: number, n: number) => ({
  title: 'Farm root',
  description: 'Ten small leaves to verify.',
  billing_code: 'farm',
  children: Array.from({ length: n }, (_, i) => ({
    title: `Leaf ${i + 1}`,
    description: 'A leaf with a peer verifier.',
    verifier_config: { kind: 'peer', agent_id: peer },
  })),
});

async function setup(t: TestContext) {
  const f = await mcpFixture({ agent: { name: 'farmer' } });
  t.after(() => f.close());
  const child = f.addAgent('sprout', { parentId: f.agent.agentId, spawnDepth: 1 });
  const reviewer = f.addAgent('reviewer');
  return {
    f,
    owner: await f.connect(f.ownerToken),
    farmer: await f.connect(f.agentToken),
    sprout: await f.connect(child.token),
    reviewer: await f.connect(reviewer.token),
    ids: { farmer: f.agent.agentId, sprout: child.agentId, reviewer: reviewer.agentId },
  };
}

describe('a verdict never comes from the worker or its spawn lineage', () => {
  it('a proposer naming itself or an agent of its lineage as peer verifier is refused at proposal time', async (t) => {
    const { f, owner, farmer, ids } = await setup(t);
    const g = await ok(owner, 'create_goal', {
      title: 'Farm goal',
      description: 'The owner chose auto here.',
      coordinator_config: 'farmer',
      approval_mode: 'auto',
    });
    for (const peer of [ids.farmer, ids.sprout]) {
      const why = await refused(
        f,
        farmer,
        'propose_task_tree',
        { goal_id: g.goal_id, tree: leaves(peer, 10) },
        'ErrSelfVerification',
      );
      assert.match(why, /tree\.children\[0\]\.verifier_config\.agent_id/);
    }
  });

  it("the verifier and its lineage cannot claim the work; an independent peer's verdict counts", async (t) => {
    const { f, owner, farmer, sprout, reviewer, ids } = await setup(t);
    const g = await ok(owner, 'create_goal', {
      title: 'Owner tree',
      description: 'The owner proposes the tree.',
      coordinator_config: 'reviewer',
      approval_mode: 'auto',
    });
    const tasks = (await ok(owner, 'propose_task_tree', { goal_id: g.goal_id, tree: leaves(ids.farmer, 3) }))
      .task_ids as number[];
    const before = score(f, ids.farmer);
    await refused(f, farmer, 'claim_task', { task_id: tasks[1] }, 'ErrSelfVerification');
    await refused(f, sprout, 'claim_task', { task_id: tasks[1] }, 'ErrSelfVerification');
    assert.equal(score(f, ids.farmer), before, 'no evidence from its own work');
    // An independent agent does the work, and the verifier's verdict counts for it.
    await ok(reviewer, 'claim_task', { task_id: tasks[1] });
    await ok(reviewer, 'complete_task', { task_id: tasks[1], summary: 'done' });
    const before2 = score(f, ids.reviewer);
    await ok(farmer, 'verify_task', { task_id: tasks[1], verdict: 'approve' });
    assert.ok(score(f, ids.reviewer) > before2);
  });
});

function score(f: McpFixture, agentId: number): number {
  const agent = getAgent(f.app.engine.db, agentId)!;
  return scoreOf(
    f.app.engine.db,
    agent.ownerId,
    agent.configHash,
    'farm',
    f.app.engine.clock().toISOString(),
    reputationSettings().halfLifeDays,
  ).score;
}
