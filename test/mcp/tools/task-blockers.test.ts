import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { openBreakersOf } from '../../../src/projections/breaker-queries.js';
import { listRuns } from '../../../src/projections/run-queries.js';
import { getTask } from '../../../src/projections/task-queries.js';
import { ok, refusal } from '../../helpers/calls.js';
import { runtimeFixture } from '../../helpers/runtime.js';
import { registerAgent } from '../../../src/actions/principals.js';

/**
 * Task dependencies through real MCP clients and real runs: a blocked task refuses claims until its
 * blockers are done, then its coordinator is woken (task_unblocked); a cancelled blocker is told in the goal
 * channel; a tree or a write that would close a cycle is refused with nothing written, and an agent's attempt
 * in a run trips its dependency_cycle breaker on the goal.
 */
const WORKER = `node --import ${import.meta.resolve('tsx')} ${join(process.cwd(), 'test/fixtures/agents/worker.ts')}`;
type Body = Record<string, unknown>;
const PEER = { name: 'reviewer', model: 'test-model', systemPrompt: 'You review builds.', tier: 'supervised' as const };
const node = (title: string, extra: Body = {}) => ({ title, description: `${title}, carefully`, ...extra });

async function world(t: TestContext) {
  const f = await runtimeFixture({ agentTools: ['whoami', 'claim_task', 'complete_task', 'set_task_blockers'] });
  t.after(() => f.close());
  const coord = f.addRunner('coord', 'true');
  // A peer verifier outside any run: its verdict makes a hand-in done whatever the goal's evidence rule.
  const peer = registerAgent(
    f.app,
    { ...PEER, ownerId: f.ownerId, toolScope: ['verify_task'], command: null, parentId: null, spawnDepth: 0 },
    { actor: 'user:owner' },
  );
  const owner = await f.connect(f.ownerToken);
  const worker = await f.connect(f.agentToken);
  const reviewer = await f.connect(peer.token);
  const goal = async (tree: Body) => {
    const g = await ok(owner, 'create_goal', {
      title: `Release ${Math.random().toString(36).slice(2, 8)}`,
      description: 'A goal whose tasks wait on each other.',
      coordinator_config: 'coord',
      approval_mode: 'auto',
    });
    const p = await ok(owner, 'propose_task_tree', { goal_id: g.goal_id, tree });
    await f.reactor.idle(); // the coordinator's wake-ups settle: a refusal below must be the only thing that did not write
    return { goalId: g.goal_id as number, channelId: g.channel_id as number, ids: p.task_ids as number[] };
  };
  return { f, coord, owner, worker, reviewer, peerId: peer.agentId, goal };
}

describe('task dependencies', () => {
  it('a blocked task is claimed only once its blockers are done; then the coordinator is woken; a cancelled blocker is told', async (t) => {
    const { f, coord, owner, worker, reviewer, peerId, goal } = await world(t);
    const g = await goal(
      node('Release', {
        children: [
          node('Build it', { verifier_config: { kind: 'peer', agent_id: peerId } }),
          node('Test it', { blocked_by_nodes: ['tree.children[0]'] }),
          node('Ship it', { blocked_by_nodes: ['tree.children[0]', 'tree.children[1]'] }),
          node('Announce it', { blocked_by_nodes: ['tree.children[4]'] }),
          node('Draft the post'),
        ],
      }),
    );
    const [, build, test, , announce, draft] = g.ids as [number, number, number, number, number, number];
    const { details } = await refusal(f, worker, 'claim_task', { task_id: test }, 'ErrTaskBlocked');
    assert.deepEqual(details.blocked_by, [{ task_id: build, status: 'approved' }]);
    const tree = (await ok(owner, 'get_goal', { goal_id: g.goalId })).tasks_tree as { children: Body[] }[];
    assert.deepEqual(tree[0]!.children[1]!.blocked_by, [{ id: build, status: 'approved', done: false }]);

    await ok(worker, 'claim_task', { task_id: build });
    await ok(worker, 'complete_task', { task_id: build, summary: 'built' });
    await ok(reviewer, 'verify_task', { task_id: build, verdict: 'approve', reason: 'it builds' });
    await f.reactor.idle();
    const unblocked = listRuns(f.app.engine.db, { agentId: coord.agentId, limit: 50 }).flatMap((r) =>
      r.wakes.filter((w) => w.source === 'task_unblocked').map(() => r.taskId),
    );
    assert.deepEqual(unblocked, [test], 'only the task whose last blocker is done (Ship it still waits on Test it)');
    assert.equal((await ok(worker, 'claim_task', { task_id: test })).status, 'claimed');

    const ask = await ok(owner, 'cancel_task', { task_id: draft, reason: 'no post after all' });
    await ok(owner, 'cancel_task', {
      task_id: draft,
      reason: 'no post after all',
      confirmation_token: ask.confirm_token,
    });
    await f.reactor.idle();
    const messages = (await ok(owner, 'get_channel_messages', { channel_id: g.channelId, limit: 200 })).messages as {
      body: string;
      metadata: Body | null;
    }[];
    const told = messages.filter((m) => m.metadata?.event === 'BlockerClosed');
    assert.equal(told.length, 1);
    assert.match(told[0]!.body, new RegExp(`^@coord Task #${draft} .* is cancelled, and #${announce} `));
    assert.deepEqual(told[0]!.metadata!.waiting_task_ids, [announce]);
  });

  it('a tree or a change of blockers that would close a cycle is refused with the cycle, nothing written', async (t) => {
    const { f, owner, goal } = await world(t);
    const cyclic = node('Release', {
      children: [
        node('One', { blocked_by_nodes: ['tree.children[1]'] }),
        node('Two', { blocked_by_nodes: ['tree.children[0]'] }),
      ],
    });
    const g = await goal(
      node('Release', { children: [node('One'), node('Two', { blocked_by_nodes: ['tree.children[0]'] })] }),
    );
    const { details } = await refusal(
      f,
      owner,
      'propose_task_tree',
      { goal_id: g.goalId, tree: cyclic },
      'ErrDependencyCycle',
    );
    assert.deepEqual(details.cycle, ['tree.children[0]', 'tree.children[1]', 'tree.children[0]']);
    const [, one, two] = g.ids as [number, number, number];
    const set = await refusal(f, owner, 'set_task_blockers', { task_id: one, blocked_by: [two] }, 'ErrDependencyCycle');
    assert.deepEqual(set.details.cycle, [one, two, one]);
    await refusal(f, owner, 'set_task_blockers', { task_id: one, blocked_by: [one] }, 'ErrInvalidInput');
    assert.equal((await ok(owner, 'set_task_blockers', { task_id: two, blocked_by: [] })).status, 'approved');
    assert.deepEqual(openBreakersOf(f.app.engine.db, f.agentId), [], "the owner's refusals trip no breaker");
  });

  it('an agent closing a cycle in a run is refused and its dependency_cycle breaker trips on the goal', async (t) => {
    const { f, goal } = await world(t);
    const g = await goal(
      node('Release', { children: [node('One', { blocked_by_nodes: ['tree.children[1]'] }), node('Two')] }),
    );
    const [, one, two] = g.ids as [number, number, number];
    const call = JSON.stringify({ name: 'set_task_blockers', arguments: { task_id: two, blocked_by: [one] } });
    const looper = f.addRunner(
      'looper',
      `WORKER_CLAIM=1 WORKER_CALL='${call}' ${WORKER}`,
      {},
      {
        toolScope: ['whoami', 'claim_task', 'set_task_blockers'],
      },
    );
    const run = f.reactor.wake({ agentId: looper.agentId, source: 'manual', taskId: two, by: 'user-1' }).run;
    await f.reactor.whenDone(run.runId);
    const dir = join(f.app.dataDir, 'workspace', 'agents', 'looper');
    const result = JSON.parse(readFileSync(join(dir, `call-${run.runId}.json`), 'utf8')) as {
      isError?: boolean;
      content: { text: string }[];
    };
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text, /^ErrDependencyCycle: /);
    assert.deepEqual(getTask(f.app.engine.db, two)!.blockedBy, [], 'the refused write stays unwritten');
    const [breaker, ...more] = openBreakersOf(f.app.engine.db, looper.agentId);
    assert.equal(more.length, 0);
    assert.equal(breaker!.breaker, 'dependency_cycle');
    assert.equal(breaker!.goalId, g.goalId);
    assert.deepEqual(breaker!.evidence.runIds, [run.runId]);
    assert.deepEqual(breaker!.evidence.taskIds, [two, one, two]);
  });
});
