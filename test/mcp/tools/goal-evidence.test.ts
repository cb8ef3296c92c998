import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readAll } from '../../../src/engine/store.js';
import type { TaskVerified } from '../../../src/events/tasks.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';
import { ok, refusal, refused } from '../../helpers/calls.js';

/**
 * "Done only with evidence" through a real MCP Client (issue 34, Must 2): on by default for a new goal,
 * the owner's set_goal_evidence (agents refused, bad input refused, nothing written), a handed-in leaf
 * awaiting a verdict, the owner's verify_task, complete_goal refused naming the unverified leaves, and a
 * peer's rejection sent back to the assignee with its words — an agent Colony does not run gets them by
 * DM, and no reputation evidence until the attempt ends.
 */
type Body = Record<string, unknown>;
interface World {
  f: McpFixture;
  owner: Client;
  worker: Client;
  reviewer: Client;
  ids: { worker: number; reviewer: number };
}

async function world(t: TestContext): Promise<World> {
  const f = await mcpFixture();
  t.after(() => f.close());
  const reviewer = f.addAgent('reviewer');
  return {
    f,
    owner: await f.connect(f.ownerToken),
    worker: await f.connect(f.agentToken),
    reviewer: await f.connect(reviewer.token),
    ids: { worker: f.agent.agentId, reviewer: reviewer.agentId },
  };
}

/** An auto-approved goal (`goal` merges into create_goal) with two leaves under a root (`leaf` merges into the first). */
async function goalWith(w: World, goal: Body = {}, leaf: Body = {}) {
  const g = await ok(w.owner, 'create_goal', {
    title: 'Ship the guide',
    description: 'Write and check the guide.',
    approval_mode: 'auto',
    ...goal,
  });
  const p = await ok(w.owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: {
      title: 'Guide',
      description: 'The whole guide.',
      children: [
        { title: 'Write it', description: 'Write the guide.', ...leaf },
        { title: 'Index it', description: 'Add it to the index.' },
      ],
    },
  });
  const [root, first, second] = p.task_ids as number[];
  return { goalId: g.goal_id as number, root: root!, first: first!, second: second! };
}
const handIn = async (w: World, taskId: number, summary = 'written') => {
  await ok(w.worker, 'claim_task', { task_id: taskId });
  return ok(w.worker, 'complete_task', { task_id: taskId, summary });
};
const goalOf = async (w: World, goalId: number) => (await ok(w.owner, 'get_goal', { goal_id: goalId })).goal as Body;

describe('done only with evidence (MCP)', () => {
  it('is on for a new goal: an auto-verified leaf awaits the owner, whose verdict makes it done', async (t) => {
    const w = await world(t);
    const g = await goalWith(w);
    assert.deepEqual(
      [(await goalOf(w, g.goalId)).require_evidence, (await goalOf(w, g.goalId)).max_rejections],
      [true, 2],
    );
    assert.deepEqual(await handIn(w, g.first), { task_id: g.first, status: 'awaiting_verification' });
    await refused(w.f, w.worker, 'verify_task', { task_id: g.first, verdict: 'approve' }, 'ErrVerifierNotConfigured');
    assert.deepEqual(
      await ok(w.owner, 'verify_task', { task_id: g.first, verdict: 'approve', reason: 'read it through' }),
      { task_id: g.first, new_status: 'done' },
    );
    const v = readAll(w.f.app.engine.db, { limit: 10_000 }).findLast((e) => e.type === 'TaskVerified')!
      .data as TaskVerified['data'];
    assert.deepEqual([v.verifierKind, v.verifier.name, v.reason], ['owner', 'owner', 'read it through']);
  });

  it('complete_goal is refused while leaves are unverified, naming them; then completes', async (t) => {
    const w = await world(t);
    const g = await goalWith(w);
    await handIn(w, g.first);
    const args = { goal_id: g.goalId, status: 'completed', summary: 'all written' };
    const { text, details } = await refusal(w.f, w.owner, 'complete_goal', args, 'ErrUnverifiedLeaves');
    assert.match(
      text,
      new RegExp(
        `2 of its leaf tasks are not done .*#${g.first} \\(awaiting_verification\\), #${g.second} \\(approved\\)`,
      ),
    );
    assert.deepEqual(details.tasks, [
      { task_id: g.first, status: 'awaiting_verification' },
      { task_id: g.second, status: 'approved' },
    ]);
    await ok(w.owner, 'verify_task', { task_id: g.first, verdict: 'approve' });
    const ask = await ok(w.owner, 'cancel_task', { task_id: g.second, reason: 'not needed' });
    await ok(w.owner, 'cancel_task', {
      task_id: g.second,
      reason: 'not needed',
      confirmation_token: ask.confirm_token,
    });
    assert.equal((await ok(w.owner, 'complete_goal', args)).status, 'completed');
  });

  it('off: auto verifiers decide leaves at once and the goal completes with leaves open, as before', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, { require_evidence: false });
    assert.deepEqual(await handIn(w, g.first), { task_id: g.first, status: 'done' });
    const args = { goal_id: g.goalId, status: 'completed', summary: 'enough' };
    assert.equal((await ok(w.owner, 'complete_goal', args)).status, 'completed');
  });

  it('set_goal_evidence is the owner’s: an agent, bad input and an empty change are refused with nothing written', async (t) => {
    const w = await world(t);
    const g = await goalWith(w);
    // An owner's tool: an agent's session does not have it at all.
    await refused(
      w.f,
      w.worker,
      'set_goal_evidence',
      { goal_id: g.goalId, require_evidence: false },
      'ErrToolNotFound',
    );
    await refused(w.f, w.owner, 'set_goal_evidence', { goal_id: g.goalId }, 'ErrInvalidInput');
    const byAgent = { title: 'Lax goal', description: 'Let my work pass.', require_evidence: false };
    await refused(w.f, w.worker, 'create_goal', byAgent, 'ErrForbidden');
    await refused(w.f, w.owner, 'set_goal_evidence', { goal_id: g.goalId, max_rejections: 11 }, 'ErrInvalidInput');
    await refused(w.f, w.owner, 'set_goal_evidence', { goal_id: 999, require_evidence: false }, 'ErrGoalNotFound');
    assert.deepEqual(
      await ok(w.owner, 'set_goal_evidence', { goal_id: g.goalId, require_evidence: false, max_rejections: 0 }),
      {
        goal_id: g.goalId,
        require_evidence: false,
        max_rejections: 0,
      },
    );
    const head = w.f.app.engine.head().position;
    await ok(w.owner, 'set_goal_evidence', { goal_id: g.goalId, require_evidence: false });
    assert.equal(w.f.app.engine.head().position, head, 'the same rule again writes nothing');
    assert.deepEqual(await handIn(w, g.first), { task_id: g.first, status: 'done' });
  });

  it("a peer's rejection goes back to its assignee with the peer's words (by DM: Colony does not run it), and is no reputation evidence until the attempt ends", async (t) => {
    const w = await world(t);
    const peer = { verifier_config: { kind: 'peer', agent_id: w.ids.reviewer } };
    const g = await goalWith(w, { max_rejections: 1 }, peer);
    const evidence = () =>
      readAll(w.f.app.engine.db, { limit: 10_000 }).filter(
        (e) => e.type === 'EvidenceRecorded' && (e.data as { ref: string }).ref.startsWith(`task:${g.first} `),
      ).length;
    const before = evidence();
    await handIn(w, g.first);
    const reason = 'Section 2 has no example; add one';
    assert.deepEqual(await ok(w.reviewer, 'verify_task', { task_id: g.first, verdict: 'reject', reason }), {
      task_id: g.first,
      new_status: 'claimed',
    });
    assert.equal(evidence(), before, 'a rejection sent back is feedback, not evidence');
    const dms = (await ok(w.worker, 'read_inbox', { limit: 50 })).messages as { body: string }[];
    const dm = dms.find((m) => m.body.includes(`task #${g.first}`))!;
    assert.match(dm.body, /was rejected by its verifier \(peer: reviewer\); it is yours again/);
    assert.ok(dm.body.includes(reason), dm.body);
    // Handed in again and rejected past the limit: failed, and now it counts.
    assert.deepEqual(await ok(w.worker, 'complete_task', { task_id: g.first, summary: 'added an example' }), {
      task_id: g.first,
      status: 'awaiting_verification',
    });
    await ok(w.reviewer, 'verify_task', { task_id: g.first, verdict: 'reject', reason: 'still none' });
    const tree = (await ok(w.owner, 'get_goal', { goal_id: g.goalId })).tasks_tree as { children: Body[] }[];
    const node = tree[0]!.children.find((n) => n.id === g.first)!;
    assert.deepEqual([node.status, node.rejections, node.failure_reason], ['failed', 2, 'still none']);
    assert.equal(evidence(), before + 1);
  });
});
