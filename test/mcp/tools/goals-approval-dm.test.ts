import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ok } from '../../helpers/calls.js';
import { httpFixture, type HttpFixture } from '../../helpers/mcp-http.js';

/**
 * No dead end after an approval: when the owner approves a task tree later than the proposing
 * call, the proposer gets a DM — which wakes it — naming the tasks and the leaves that wait for a claim.
 * In auto mode the proposing call already answered with the tasks, so no DM (and no extra wake-up).
 */
let f: HttpFixture;
let owner: Client;
let agent: Client;
const tree = {
  title: 'Release notes',
  description: 'The notes for the release.',
  children: [
    { title: 'Collect the changes', description: 'Every merged change since the last tag.' },
    { title: 'Write the notes', description: 'One line per change, grouped by area.' },
  ],
};

before(async () => {
  f = await httpFixture({ agentTools: ['create_goal', 'propose_task_tree', 'read_inbox', 'whoami'] });
  owner = await f.connect(f.ownerToken);
  agent = await f.connect(f.agentToken);
});
after(() => f.close());

const inbox = async (): Promise<{ from: string; body: string; metadata: Record<string, unknown> | null }[]> =>
  ((await ok(agent, 'read_inbox', {})).messages ?? []) as {
    from: string;
    body: string;
    metadata: Record<string, unknown> | null;
  }[];

describe('approving a task tree tells its proposer', () => {
  it("a person's approval DMs the proposer with the tasks and the leaves to hand out", async () => {
    const g = await ok(agent, 'create_goal', {
      title: 'Ship the release notes',
      description: 'Notes for every change in this release.',
      coordinator_config: 'worker',
    });
    const p = await ok(agent, 'propose_task_tree', { goal_id: g.goal_id, tree });
    assert.equal(p.status, 'pending');
    const decided = await ok(owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' });
    const ids = (decided.decision as { task_ids: number[] }).task_ids;
    const dms = (await inbox()).filter((m) => m.from === 'system' && /was approved/.test(m.body));
    assert.equal(dms.length, 1, JSON.stringify(await inbox()));
    assert.equal(
      dms[0]!.body,
      `Your task-tree proposal #${p.proposal_id} for goal #${g.goal_id} "Ship the release notes" was approved by owner: 3 tasks ` +
        `(#${ids[0]}–#${ids[2]}). Its leaves #${ids[1]}, #${ids[2]} wait for a claim: hand them out — spawn agents for them (propose_agent) ` +
        "or tell your team's agents which to claim (send_message).",
    );
  });

  it('auto mode answers the proposing call instead: no DM', async () => {
    await ok(owner, 'update_agent', { agent_id: f.agentId, autonomy_tier: 'autonomous' }); // a supervised agent's proposals always wait (autonomy tiers)
    const g = await ok(owner, 'create_goal', {
      title: 'Ship the changelog',
      description: 'The changelog for this release.',
      coordinator_config: 'worker',
      approval_mode: 'auto',
    });
    const before = (await inbox()).length;
    const p = await ok(agent, 'propose_task_tree', { goal_id: g.goal_id, tree });
    assert.equal(p.status, 'approved');
    assert.equal((await inbox()).filter((m) => /was approved/.test(m.body)).length, 1, "only the first goal's DM");
    assert.ok((await inbox()).length >= before);
  });
});
