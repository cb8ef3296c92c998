import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createGoal } from '../../src/actions/goals.js';
import { createOwner } from '../../src/actions/principals.js';
import { proposeTaskTree } from '../../src/actions/proposals.js';
import { openApp } from '../../src/app.js';
import { getProposal } from '../../src/projections/proposal-queries.js';
import { ok } from '../helpers/calls.js';
import { colonyLive } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `colony serve --auto-approve` through the real CLI: it says so loudly at start, and a task-tree
 * proposal in the serving owner's goal whose approval mode is `human` is approved without the owner, by
 * `system` — another owner's on the same store is not.
 */
describe('colony serve --auto-approve', () => {
  it('warns at start and approves a pending proposal in a human-mode goal', async (t) => {
    const scratch = tempDir('colony-auto-approve-');
    t.after(() => scratch.cleanup());
    const serve = colonyLive(['serve', '--auto-approve', '--port', '0', '--data', scratch.dir]);
    t.after(() => serve.stop());
    const token = /token \(shown once, keep it\): (\S+)/.exec(await serve.waitFor(/token \(shown once/, 'stderr'))![1]!;
    const url = /http:\/\/\S+/.exec(await serve.waitFor(/^Colony listening on /, 'stderr'))![0];
    assert.match(
      await serve.waitFor(/^WARNING: --auto-approve/, 'stderr'),
      /approved the moment it is made, without you \(recorded as approved by system\)/,
    );

    const client = new Client({ name: 'auto-approve-test', version: '0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    t.after(() => client.close());
    const g = await ok(client, 'create_goal', {
      title: 'Unattended demo',
      description: 'Approved without the owner.',
      approval_mode: 'human',
    });
    const p = await ok(client, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: {
        title: 'Root task',
        description: 'The whole demo.',
        children: [{ title: 'Leaf task', description: 'One step of it.' }],
      },
    });
    assert.equal(p.status, 'pending', 'human mode: the proposing call itself leaves it pending');
    let snapshot: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) {
      snapshot = await ok(client, 'get_goal', { goal_id: g.goal_id });
      if ((snapshot.tasks_tree as unknown[]).length > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const goal = snapshot.goal as { status: string; pending_proposal_id: number | null };
    assert.deepEqual(
      [goal.status, goal.pending_proposal_id, (snapshot.tasks_tree as { title: string }[])[0]?.title],
      ['active', null, 'Root task'],
    );

    // Another owner on the same store: their proposal is theirs to decide, even when it comes from another process.
    const other = openApp({ dataDir: scratch.dir, durability: 'normal' });
    t.after(() => other.engine.close());
    const rival = createOwner(other, 'rival', { actor: 'system' });
    const speaker = { key: `user-${rival.userId}`, name: 'rival', tenant: rival.userId };
    const theirs = createGoal(
      other,
      speaker,
      {
        title: 'Rival goal',
        description: "Not the serving owner's.",
        budgets: { tokens: null, cents: null },
        maxSpawnDepth: 2,
        coordinatorConfig: 'default',
        approvalMode: 'human',
      },
      { actor: 'user:rival' },
    );
    const proposed = proposeTaskTree(
      other,
      speaker,
      theirs.goalId,
      'Theirs.',
      { title: 'Their root', description: 'Their whole plan.' },
      { actor: 'user:rival' },
    );
    await ok(client, 'create_goal', {
      title: 'A later goal',
      description: 'Its commit makes the approver look again.',
      approval_mode: 'human',
    });
    await new Promise((r) => setTimeout(r, 2_500)); // more than two of the approver's 1 s polls
    assert.equal(getProposal(other.engine.db, proposed.proposalId)?.status, 'pending');
  });
});
