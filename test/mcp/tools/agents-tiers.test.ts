import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { registerAgent } from '../../../src/actions/principals.js';
import { autoApprovable } from '../../../src/commands/tiers.js';
import type { Tier } from '../../../src/events/principals.js';
import { getUserByName } from '../../../src/projections/principal-queries.js';
import { ok } from '../../helpers/calls.js';
import { httpFixture, type HttpFixture } from '../../helpers/mcp-http.js';

/**
 * Autonomy tiers when a proposal is made, through a real MCP client: in a goal whose
 * approval mode is `auto`, an autonomous coordinator's tree and spawn are approved at once, an assisted
 * one's tree is but its spawn waits for the owner, and a supervised one's tree waits too.
 */
let f: HttpFixture;
let owner: Client;
const TOOLS = ['propose_task_tree', 'propose_agent', 'get_goal', 'whoami'];
const agents: Partial<Record<Tier, Client>> = {};

before(async () => {
  f = await httpFixture();
  owner = await f.connect(f.ownerToken);
  const ownerId = getUserByName(f.app.engine.db, 'owner')!.userId;
  for (const tier of ['autonomous', 'assisted', 'supervised'] as const) {
    const a = registerAgent(
      f.app,
      {
        name: `${tier}-lead`,
        ownerId,
        model: 'scripted',
        systemPrompt: `You coordinate goals as a ${tier} agent.`,
        toolScope: TOOLS,
        tier,
        command: null,
        parentId: null,
        spawnDepth: 0,
      },
      { actor: 'user:owner' },
    );
    agents[tier] = await f.connect(a.token);
  }
});
after(() => f.close());

const tree = {
  title: 'Docs refresh',
  description: 'Refresh every page of the docs.',
  children: [{ title: 'The guide', description: 'Rewrite the guide from scratch.' }],
};
const spawn = (goalId: number, parentTaskId: number, name: string) => ({
  goal_id: goalId,
  parent_task_id: parentTaskId,
  name,
  model: 'scripted',
  system_prompt: 'You rewrite one guide carefully and well.',
  tool_scope: ['whoami'],
  autonomy_tier: 'supervised',
  reason: 'A writer for the guide, which needs focus.',
});

describe('autonomy tiers in an auto-approval goal', () => {
  for (const [tier, treeStatus, spawnStatus] of [
    ['autonomous', 'approved', 'approved'],
    ['assisted', 'approved', 'pending'],
    ['supervised', 'pending', null],
  ] as const) {
    it(`${tier}: its task tree is ${treeStatus}${spawnStatus ? `, its spawn ${spawnStatus}` : ''}`, async () => {
      const client = agents[tier]!;
      const g = await ok(owner, 'create_goal', {
        title: `A goal led by the ${tier} lead`,
        description: 'Coordinated in auto approval mode.',
        coordinator_config: `${tier}-lead`,
        approval_mode: 'auto',
      });
      const p = await ok(client, 'propose_task_tree', { goal_id: g.goal_id, tree });
      assert.equal(p.status, treeStatus);
      if (spawnStatus === null) {
        const snapshot = await ok(owner, 'get_goal', { goal_id: g.goal_id });
        assert.deepEqual(
          [(snapshot.goal as { status: string }).status, (snapshot.tasks_tree as unknown[]).length],
          ['draft', 0],
          'nothing created without the owner',
        );
        return;
      }
      const root = (p.task_ids as number[])[0]!;
      const s = await ok(client, 'propose_agent', spawn(g.goal_id as number, root, `${tier}-writer`));
      assert.deepEqual([s.status, s.agent_id === null], [spawnStatus, spawnStatus === 'pending']);
    });
  }

  it("human mode makes every proposal wait, and the owner's own proposals follow the mode", () => {
    for (const kind of ['task_tree', 'agent'] as const) {
      for (const tier of [null, 'autonomous', 'assisted', 'supervised'] as const)
        assert.equal(autoApprovable('human', kind, tier), false);
      assert.equal(autoApprovable('auto', kind, null), true);
    }
  });
});
