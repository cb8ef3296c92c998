import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fixedClock } from '../../../src/clock.js';
import { readAll } from '../../../src/engine/store.js';
import { CommandVerifier } from '../../../src/runtime/verifier.js';
import { OUTPUT_TAIL_BYTES } from '../../../src/runtime/verifier-verdict.js';
import { LeaseSweeper } from '../../../src/runtime/leases.js';
import { rollupByBillingCode, rollupSubtree } from '../../../src/projections/task-queries.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';
import { ok, refused } from '../../helpers/calls.js';

/**
 * The task lifecycle through a real MCP Client: verification by auto, peer and command verifiers; claims as leases on a controllable
 * clock; cost rollups; the budget's soft alert and pause; and bad input that appends nothing.
 */
delete process.env.COLONY_ALLOWED_ROOTS; // the workspace is the only allowed root in these tests

type Body = Record<string, unknown>;
type Msg = { message_id: number; body: string; from: string; kind: string; metadata: Record<string, unknown> | null };
type TaskNode = {
  id: number;
  title: string;
  status: string;
  billing_code: string;
  assignee: { id: number; name: string } | null;
  lease_expires_at: string | null;
  verdict: string | null;
  verified_by: string | null;
  failure_reason: string | null;
  verifier_output: string | null;
  spent_tokens: number;
  spent_dollars_cents: number;
  rollup: { tokens: number; dollars_cents: number; task_count: number };
  children: TaskNode[];
};
type Tree = { title: string; description: string; children?: Tree[] } & Body;

const T0 = '2026-03-01T09:00:00.000Z';
const minutes = (n: number) => n * 60_000;
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

interface World {
  f: McpFixture;
  clock: ReturnType<typeof fixedClock>;
  owner: Client;
  worker: Client;
  helper: Client;
  reviewer: Client;
  coord: Client;
  stranger: Client;
  ids: { worker: number; helper: number; reviewer: number; coord: number };
}

/** A fresh Colony with agents worker, helper, reviewer, coord (a coordinator) and an agent of another tenant. */
async function world(t: TestContext): Promise<World> {
  const clock = fixedClock(T0);
  const f = await mcpFixture({ clock });
  t.after(() => f.close());
  const helper = f.addAgent('helper');
  const reviewer = f.addAgent('reviewer');
  const coord = f.addAgent('coord');
  const other = f.addOwner('other-owner');
  const outsider = f.addAgent('outsider', { ownerId: other.userId });
  return {
    f,
    clock,
    owner: await f.connect(f.ownerToken),
    worker: await f.connect(f.agentToken),
    helper: await f.connect(helper.token),
    reviewer: await f.connect(reviewer.token),
    coord: await f.connect(coord.token),
    stranger: await f.connect(outsider.token),
    ids: { worker: f.agent.agentId, helper: helper.agentId, reviewer: reviewer.agentId, coord: coord.agentId },
  };
}

let recipes = 0;
/** The owner registers a verifier recipe (the only commands a command verifier runs) and the tree names it. */
async function recipe(w: World, command: string, options: { cwd?: string; timeout_sec?: number } = {}): Promise<Body> {
  const name = `check-${(recipes += 1)}`;
  await ok(w.owner, 'add_verifier', { name, command, ...options });
  return { kind: 'command', recipe: name };
}

/** Like `refused`, for refusals that commit a consequence (a refused claim pauses the goal). */
async function refusedWith(client: Client, name: string, args: Body, code: string): Promise<string> {
  const { result } = await callTool(client, name, args);
  assert.equal(result.isError, true, `${name}(${JSON.stringify(args)}) should fail`);
  assert.ok(textOf(result).startsWith(`${code}: `), `${name}: expected ${code}, got ${textOf(result)}`);
  return textOf(result);
}

const node = (title: string, extra: Body = {}, children?: Tree[]): Tree => ({
  title,
  description: `${title}: do it carefully`,
  ...extra,
  ...(children ? { children } : {}),
});

interface Goal {
  goalId: number;
  channelId: number;
  slug: string;
  taskIds: number[];
}

/**
 * The owner creates a goal coordinated by `coord`, which proposes `tree`; the owner approves it by
 * reacting approve on the proposal message. Task ids come back in depth-first order.
 */
let goals = 0;
async function goalWith(w: World, tree: Tree, goal: Body = {}): Promise<Goal> {
  goals += 1;
  const g = await ok(w.owner, 'create_goal', {
    title: `Goal number ${goals}`,
    description: 'A goal for the task tests',
    coordinator_config: 'coord',
    // Verdicts as before the evidence rule (task-evidence.test.ts has the rule): an auto verifier decides a
    // leaf, a rejection fails the task.
    require_evidence: false,
    max_rejections: 0,
    ...goal,
  });
  const p = await ok(w.coord, 'propose_task_tree', { goal_id: g.goal_id, reasoning: 'split by area', tree });
  if (p.status === 'pending') {
    assert.equal(
      (await ok(w.owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' })).action,
      'added',
    );
  }
  const snap = await snapshot(w, g.goal_id as number);
  assert.equal((snap.goal as Body).status, 'active');
  const taskIds = flatten(snap.tasks_tree as TaskNode[]).map((n) => n.id);
  if (p.status === 'approved') assert.deepEqual(p.task_ids, taskIds);
  return { goalId: g.goal_id as number, channelId: g.channel_id as number, slug: g.slug as string, taskIds };
}

const flatten = (nodes: TaskNode[]): TaskNode[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);
const snapshot = (w: World, goalId: number) => ok(w.owner, 'get_goal', { goal_id: goalId });
async function task(w: World, goalId: number, taskId: number): Promise<TaskNode> {
  const found = flatten((await snapshot(w, goalId)).tasks_tree as TaskNode[]).find((n) => n.id === taskId);
  assert.ok(found, `task ${taskId} is in goal ${goalId}`);
  return found;
}
async function goalRow(w: World, goalId: number): Promise<Body> {
  return (await snapshot(w, goalId)).goal as Body;
}
async function channel(w: World, channelId: number): Promise<Msg[]> {
  return (await ok(w.worker, 'get_channel_messages', { channel_id: channelId, limit: 200 })).messages as Msg[];
}
const withEvent = (messages: Msg[], event: string): Msg[] => messages.filter((m) => m.metadata?.event === event);
/** The DMs a client got, but the approval of its own tree (goalWith approves what the coordinator proposed: that DM is test set-up). */
async function inbox(client: Client): Promise<Msg[]> {
  return ((await ok(client, 'read_inbox', { include_read: true, limit: 200 })).messages as Msg[]).filter(
    (m) => m.metadata?.event !== 'ProposalApproved',
  );
}
/** The TaskVerified event of a task, as stored (the command verifier's output lives there). */
function verifiedEvent(w: World, taskId: number): Body {
  const e = readAll(w.f.app.engine.db, { limit: 100_000 }).find(
    (x) => x.type === 'TaskVerified' && (x.data as Body).taskId === taskId,
  );
  assert.ok(e, `task ${taskId} has a verdict`);
  return e.data as Body;
}

describe('the verification gate', () => {
  it('with no verifier configured, complete_task makes the task done at once; every transition is a goal-channel message', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Fix the links'));
    const [id] = g.taskIds;
    const claimed = await ok(w.worker, 'claim_task', { task_id: id });
    assert.deepEqual(
      [claimed.status, claimed.renewed, claimed.claimed_at, claimed.lease_expires_at],
      ['claimed', false, T0, plus(T0, minutes(30))],
    );
    assert.deepEqual(await ok(w.worker, 'complete_task', { task_id: id, summary: 'fixed 12 links' }), {
      task_id: id,
      status: 'done',
    });
    const n = await task(w, g.goalId, id!);
    assert.deepEqual(
      [n.status, n.verdict, n.verified_by, n.failure_reason, n.assignee?.name],
      ['done', 'approve', 'auto:system', null, 'worker'],
    );
    const transitions = (await channel(w, g.channelId))
      .filter((m) => m.kind === 'system' && m.metadata?.task_id === id)
      .map((m) => [m.metadata!.from, m.metadata!.to]);
    assert.deepEqual(transitions, [
      [null, 'approved'],
      ['approved', 'claimed'],
      ['claimed', 'awaiting_verification'],
      ['awaiting_verification', 'done'],
    ]);
  });

  it('a peer verifier — only the configured agent (or the owner) decides; approve → done', async (t) => {
    const w = await world(t);
    const g = await goalWith(
      w,
      node('Write the guide', { verifier_config: { kind: 'peer', agent_id: w.ids.reviewer } }),
    );
    const [id] = g.taskIds;
    await ok(w.worker, 'claim_task', { task_id: id });
    await refused(
      w.f,
      w.reviewer,
      'verify_task',
      { task_id: id, verdict: 'approve' },
      'ErrTaskNotAwaitingVerification',
    );
    const artifact = await ok(w.worker, 'send_message', {
      channel_id: g.channelId,
      body: 'Draft: https://example.test/guide',
    });
    assert.deepEqual(
      await ok(w.worker, 'complete_task', {
        task_id: id,
        summary: 'guide drafted',
        artifact_message_ids: [artifact.message_id],
      }),
      { task_id: id, status: 'awaiting_verification' },
    );
    await refused(w.f, w.worker, 'verify_task', { task_id: id, verdict: 'approve' }, 'ErrNotPermittedVerifier');
    await refused(w.f, w.helper, 'verify_task', { task_id: id, verdict: 'approve' }, 'ErrNotPermittedVerifier');
    assert.equal((await task(w, g.goalId, id!)).status, 'awaiting_verification', 'nobody else decided');
    assert.deepEqual(
      await ok(w.reviewer, 'verify_task', { task_id: id, verdict: 'approve', reason: 'clear and complete' }),
      { task_id: id, new_status: 'done' },
    );
    const n = await task(w, g.goalId, id!);
    assert.deepEqual([n.status, n.verdict, n.verified_by], ['done', 'approve', 'peer:reviewer']);
    await refused(
      w.f,
      w.reviewer,
      'verify_task',
      { task_id: id, verdict: 'reject', reason: 'changed my mind' },
      'ErrTaskNotAwaitingVerification',
    );
    assert.equal((await inbox(w.coord)).length, 0, 'an approval DMs nobody');
  });

  it('a peer rejection fails the task with its reason and DMs the coordinator', async (t) => {
    const w = await world(t);
    const g = await goalWith(
      w,
      node('Translate the FAQ', { verifier_config: { kind: 'peer', agent_id: w.ids.reviewer } }),
    );
    const [id] = g.taskIds;
    await ok(w.worker, 'claim_task', { task_id: id });
    await ok(w.worker, 'complete_task', { task_id: id, summary: 'translated' });
    assert.deepEqual(
      await ok(w.reviewer, 'verify_task', { task_id: id, verdict: 'reject', reason: 'half of it is still English' }),
      { task_id: id, new_status: 'failed' },
    );
    const n = await task(w, g.goalId, id!);
    assert.deepEqual([n.status, n.verdict, n.failure_reason], ['failed', 'reject', 'half of it is still English']);
    const dms = await inbox(w.coord);
    assert.equal(dms.length, 1);
    assert.equal(dms[0]!.from, 'system');
    assert.match(
      dms[0]!.body,
      new RegExp(
        `Task #${id} "Translate the FAQ" failed verification \\(peer, verdict reject\\): half of it is still English`,
      ),
    );
    assert.deepEqual(
      [dms[0]!.metadata?.task_id, dms[0]!.metadata?.verdict, dms[0]!.metadata?.reason],
      [id, 'reject', 'half of it is still English'],
    );
    assert.equal((await inbox(w.worker)).length, 0, 'only the coordinator is told');
    await refused(w.f, w.helper, 'claim_task', { task_id: id }, 'ErrTaskNotApproved');
  });

  it('verify_task on a task without a peer verifier is ErrVerifierNotConfigured', async (t) => {
    const w = await world(t);
    const g = await goalWith(
      w,
      node('Auto checked', {}, [node('Command checked', { verifier_config: await recipe(w, 'true') })]),
    );
    const [auto, cmd] = g.taskIds;
    await refused(w.f, w.reviewer, 'verify_task', { task_id: auto, verdict: 'approve' }, 'ErrVerifierNotConfigured');
    await refused(w.f, w.reviewer, 'verify_task', { task_id: cmd, verdict: 'approve' }, 'ErrVerifierNotConfigured');
  });
});

describe('command verifiers', () => {
  type Check = { cmd: string; cwd?: string; timeout_sec?: number };
  async function runCommand(t: TestContext, verifier: Check | ((w: World) => Check)) {
    const w = await world(t);
    const running = new CommandVerifier(w.f.app).start();
    t.after(() => running.stop());
    const { cmd, ...options } = typeof verifier === 'function' ? verifier(w) : verifier;
    const g = await goalWith(
      w,
      node('Root of the check', { acceptance_criteria: 'the check passes' }, [
        node('Checked leaf', { verifier_config: await recipe(w, cmd, options) }),
      ]),
    );
    const id = g.taskIds[1]!;
    await ok(w.worker, 'claim_task', { task_id: id });
    const completed = await ok(w.worker, 'complete_task', { task_id: id, summary: 'ready for the check' });
    assert.equal(completed.status, 'awaiting_verification', 'a command verifier runs after the commit');
    await running.idle();
    return { w, g, id, node: await task(w, g.goalId, id) };
  }

  it('exit 0 approves', async (t) => {
    const { node: n } = await runCommand(t, { cmd: 'exit 0' });
    assert.deepEqual([n.status, n.verdict, n.verified_by], ['done', 'approve', 'command:system']);
  });

  it('exit 3 rejects, records the exit code and the output tail, and DMs the coordinator', async (t) => {
    const { w, id, node: n } = await runCommand(t, { cmd: 'echo "checking links"; echo "2 dead links" >&2; exit 3' });
    assert.deepEqual([n.status, n.verdict, n.failure_reason], ['failed', 'reject', 'verifier command exited 3']);
    const v = verifiedEvent(w, id);
    assert.equal(v.exitCode, 3);
    assert.match(v.output as string, /checking links/);
    assert.match(v.output as string, /2 dead links/);
    const dms = await inbox(w.coord);
    assert.equal(dms.length, 1);
    assert.match(dms[0]!.body, /failed verification \(command, verdict reject\): verifier command exited 3/);
    assert.match(dms[0]!.body, /2 dead links/, 'the DM carries the end of the output');
    assert.match(n.verifier_output as string, /checking links[\s\S]*2 dead links/, 'get_goal shows the output tail');
  });

  it('keeps only the last 4 KiB of output', async (t) => {
    const { w, id } = await runCommand(t, {
      cmd: 'head -c 10000 /dev/zero | tr "\\0" "a"; echo; echo THE-END; exit 1',
    });
    const output = verifiedEvent(w, id).output as string;
    assert.equal(Buffer.byteLength(output), OUTPUT_TAIL_BYTES);
    assert.ok(output.endsWith('THE-END\n'));
  });

  it('a command that outlives timeout_sec is rejected as timed out', async (t) => {
    // A sleep far past the timeout: under load the world's set-up alone can take seconds, never a minute.
    const started = Date.now();
    const { w, id, node: n } = await runCommand(t, { cmd: 'sleep 60', timeout_sec: 1 });
    assert.ok(Date.now() - started < 30_000, 'the command was killed, not waited for');
    assert.deepEqual([n.status, n.failure_reason], ['failed', 'verifier command timed out after 1s']);
    assert.equal(verifiedEvent(w, id).verdict, 'reject');
  });

  it("runs in its cwd with the task context in the environment, and nothing of the server's", async (t) => {
    process.env.COLONY_TEST_SERVER_SECRET = 'must-not-leak';
    t.after(() => {
      delete process.env.COLONY_TEST_SERVER_SECRET;
    });
    const checks = [
      'test "$COLONY_TASK_ID" = "$(cat expected-task-id)"',
      'test "$COLONY_GOAL_ID" = "$(cat expected-goal-id)"',
      'test "$COLONY_TASK_TITLE" = "Checked leaf"',
      'test "$COLONY_TASK_DESCRIPTION" = "Checked leaf: do it carefully"',
      'printf %s "$COLONY_TASK_ANCESTRY" | grep -q \'"title":"Root of the check"\'',
      'printf %s "$COLONY_TASK_ANCESTRY" | grep -q \'"acceptance_criteria":"the check passes"\'',
      'printf %s "$COLONY_TASK_ANCESTRY" | grep -q "\\"id\\":$(cat expected-root-id)[,}]"',
      'test -z "$COLONY_TEST_SERVER_SECRET"',
      'test -f marker',
    ].join(' && ');
    const w = await world(t);
    const running = new CommandVerifier(w.f.app).start();
    t.after(() => running.stop());
    const cwd = join(w.f.dataDir, 'workspace', 'checks');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(cwd, 'marker'), '');
    const g = await goalWith(
      w,
      node('Root of the check', { acceptance_criteria: 'the check passes' }, [
        node('Checked leaf', { verifier_config: await recipe(w, checks, { cwd }) }),
      ]),
    );
    const id = g.taskIds[1]!;
    writeFileSync(join(cwd, 'expected-task-id'), String(id));
    writeFileSync(join(cwd, 'expected-goal-id'), String(g.goalId));
    writeFileSync(join(cwd, 'expected-root-id'), String(g.taskIds[0]));
    await ok(w.worker, 'claim_task', { task_id: id });
    await ok(w.worker, 'complete_task', { task_id: id, summary: 'ready' });
    await running.idle();
    const done = await task(w, g.goalId, id);
    assert.deepEqual(
      [done.status, done.failure_reason],
      ['done', null],
      `verdict: ${JSON.stringify(verifiedEvent(w, id))}`,
    );
  });

  it('a command that cannot start (its cwd is gone) is rejected with the reason', async (t) => {
    const {
      w,
      g,
      id,
      node: n,
    } = await runCommand(t, (world) => ({ cmd: 'true', cwd: join(world.f.dataDir, 'workspace', 'missing-dir') }));
    assert.equal(n.status, 'failed');
    assert.match(n.failure_reason ?? '', /^verifier command not run: its working directory .* does not exist/);
    const verdicts = withEvent(await channel(w, g.channelId), 'TaskTransition').filter(
      (m) => m.metadata?.task_id === id && m.metadata?.verifier_kind === 'command',
    );
    assert.equal(verdicts.length, 1, 'one verdict');
  });

  it('stopping the verifier (shutdown) decides nothing; the next start picks the task up again', async (t) => {
    const w = await world(t);
    const cwd = join(w.f.dataDir, 'workspace', 'slow');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(cwd, 'block'), '');
    const first = new CommandVerifier(w.f.app).start();
    const g = await goalWith(
      w,
      node('Slow check', {
        verifier_config: await recipe(w, 'if [ -f block ]; then sleep 30; fi; echo checked', { cwd }),
      }),
    );
    const id = g.taskIds[0]!;
    await ok(w.worker, 'claim_task', { task_id: id });
    await ok(w.worker, 'complete_task', { task_id: id, summary: 'ready' });
    const started = Date.now();
    first.stop();
    await first.idle();
    assert.ok(Date.now() - started < 5000, 'stop kills the whole process group at once');
    assert.equal((await task(w, g.goalId, id)).status, 'awaiting_verification', 'a shutdown is not a verdict');
    rmSync(join(cwd, 'block'));
    const second = new CommandVerifier(w.f.app).start();
    t.after(() => second.stop());
    await second.idle();
    assert.equal((await task(w, g.goalId, id)).status, 'done');
    assert.match(verifiedEvent(w, id).output as string, /checked/);
  });

  it('a cwd outside the allowed roots is refused at propose time and nothing is appended', async (t) => {
    const w = await world(t);
    const g = await ok(w.owner, 'create_goal', {
      title: 'Check etc',
      description: 'A goal whose check runs in /etc',
      coordinator_config: 'coord',
    });
    const check = await recipe(w, 'true');
    const text = await refused(
      w.f,
      w.coord,
      'propose_task_tree',
      {
        goal_id: g.goal_id,
        tree: node('Root', {}, [node('Leaf in etc', { verifier_config: { ...check, cwd: '/etc' } })]),
      },
      'ErrPathOutsideRoots',
    );
    assert.match(text, /tree\.children\[0\]\.verifier_config\.cwd/);
    await refused(
      w.f,
      w.coord,
      'propose_task_tree',
      {
        goal_id: g.goal_id,
        tree: node('Root', { verifier_config: { ...check, cwd: join(w.f.dataDir, 'workspace', '..', '..') } }),
      },
      'ErrPathOutsideRoots',
    );
    await refused(
      w.f,
      w.owner,
      'add_verifier',
      { name: 'in-etc', command: 'true', cwd: '/etc' },
      'ErrPathOutsideRoots',
    );
    await refused(
      w.f,
      w.coord,
      'propose_task_tree',
      {
        goal_id: g.goal_id,
        tree: node('Root', {}, [
          node('Unknown check', { verifier_config: { kind: 'command', recipe: 'no-such-recipe' } }),
        ]),
      },
      'ErrVerifierNotFound',
    );
    assert.equal((await goalRow(w, g.goal_id as number)).status, 'draft');
  });
});

describe('claims are leases on a controllable clock', () => {
  it('two agents racing for one task: exactly one wins, the other gets ErrAlreadyClaimed', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Contested'));
    const [a, b] = await Promise.all([
      callTool(w.worker, 'claim_task', { task_id: g.taskIds[0] }),
      callTool(w.helper, 'claim_task', { task_id: g.taskIds[0] }),
    ]);
    const outcomes = [a, b].map((r) => (r.result.isError ? textOf(r.result).split(':')[0] : 'won')).sort();
    assert.deepEqual(outcomes, ['ErrAlreadyClaimed', 'won']);
  });

  it('the sweeper expires a lease that ran out; another agent claims; the old assignee can no longer complete', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Leased work'));
    const id = g.taskIds[0]!;
    const sweeper = new LeaseSweeper(w.f.app);
    await ok(w.worker, 'claim_task', { task_id: id });
    await refused(w.f, w.helper, 'claim_task', { task_id: id }, 'ErrAlreadyClaimed');
    w.clock.advance(minutes(29));
    assert.deepEqual(sweeper.sweep(), [], 'nothing to expire before the lease runs out');
    await refused(w.f, w.helper, 'claim_task', { task_id: id }, 'ErrAlreadyClaimed');
    w.clock.advance(minutes(2));
    assert.deepEqual(sweeper.sweep(), [id]);
    assert.deepEqual(sweeper.sweep(), [], 'an expired lease expires once');
    const n = await task(w, g.goalId, id);
    assert.deepEqual([n.status, n.assignee, n.lease_expires_at], ['approved', null, null]);
    const expiry = withEvent(await channel(w, g.channelId), 'ClaimExpired');
    assert.equal(expiry.length, 1);
    assert.match(expiry[0]!.body, /claimed → approved by system — lease of worker expired/);
    assert.equal(expiry[0]!.metadata?.previous_assignee, 'worker');
    const now = plus(T0, minutes(31));
    const claimed = await ok(w.helper, 'claim_task', { task_id: id });
    assert.deepEqual(
      [claimed.claimed_at, claimed.lease_expires_at, claimed.renewed],
      [now, plus(now, minutes(30)), false],
    );
    await refused(w.f, w.worker, 'complete_task', { task_id: id, summary: 'I was first' }, 'ErrNotAssignee');
    await refused(w.f, w.worker, 'release_task', { task_id: id, reason: 'never mind' }, 'ErrNotAssignee');
    assert.equal((await ok(w.helper, 'complete_task', { task_id: id, summary: 'done by helper' })).status, 'done');
  });

  it('without a sweep: the old assignee gets ErrLeaseExpired, and a claim on the expired lease expires it first', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Leased work'));
    const id = g.taskIds[0]!;
    await ok(w.worker, 'claim_task', { task_id: id });
    w.clock.advance(minutes(31));
    assert.match(
      await refused(w.f, w.worker, 'complete_task', { task_id: id, summary: 'late' }, 'ErrLeaseExpired'),
      /claim it again/,
    );
    await ok(w.helper, 'claim_task', { task_id: id });
    const messages = (await channel(w, g.channelId))
      .filter((m) => m.metadata?.task_id === id)
      .map((m) => (m.metadata?.event === 'ClaimExpired' ? 'expired' : `${m.metadata?.from}→${m.metadata?.to}`));
    assert.deepEqual(messages, ['null→approved', 'approved→claimed', 'expired', 'approved→claimed']);
    assert.equal((await task(w, g.goalId, id)).assignee?.name, 'helper');
    await refused(w.f, w.worker, 'complete_task', { task_id: id, summary: 'late' }, 'ErrNotAssignee');
  });

  it('claiming again as the assignee renews the lease', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Long work'));
    const id = g.taskIds[0]!;
    await ok(w.worker, 'claim_task', { task_id: id });
    const before = (await channel(w, g.channelId)).length;
    w.clock.advance(minutes(25));
    const renewed = await ok(w.worker, 'claim_task', { task_id: id });
    assert.deepEqual(
      [renewed.renewed, renewed.claimed_at, renewed.lease_expires_at, renewed.status],
      [true, T0, plus(T0, minutes(55)), 'claimed'],
    );
    assert.equal((await task(w, g.goalId, id)).lease_expires_at, plus(T0, minutes(55)));
    assert.equal((await channel(w, g.channelId)).length, before, 'a renewal posts nothing');
    w.clock.advance(minutes(20)); // 45 minutes after the first claim: the renewed lease still holds
    assert.deepEqual(new LeaseSweeper(w.f.app).sweep(), []);
    await refused(w.f, w.helper, 'claim_task', { task_id: id }, 'ErrAlreadyClaimed');
    assert.equal((await ok(w.worker, 'complete_task', { task_id: id, summary: 'finished in time' })).status, 'done');
  });

  it('release_task gives the task back to the pool', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Hard work'));
    const id = g.taskIds[0]!;
    await ok(w.worker, 'claim_task', { task_id: id });
    await refused(w.f, w.helper, 'release_task', { task_id: id, reason: 'not mine' }, 'ErrNotAssignee');
    assert.deepEqual(await ok(w.worker, 'release_task', { task_id: id, reason: 'missing credentials' }), {
      task_id: id,
      status: 'approved',
    });
    const released = withEvent(await channel(w, g.channelId), 'TaskReleased');
    assert.match(released[0]!.body, /claimed → approved by worker — missing credentials/);
    await refused(w.f, w.worker, 'release_task', { task_id: id, reason: 'again' }, 'ErrNotAssignee');
    assert.equal((await ok(w.helper, 'claim_task', { task_id: id })).status, 'claimed');
  });

  it("cancel_task is the owner's, takes a confirmation, and ends the claim; done tasks refuse", async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Root', {}, [node('Cancel me'), node('Finish me')]));
    const [, cancelMe, finishMe] = g.taskIds;
    await ok(w.worker, 'claim_task', { task_id: cancelMe });
    const head = w.f.app.engine.head().position;
    const ask = await ok(w.owner, 'cancel_task', { task_id: cancelMe, reason: 'out of scope' });
    assert.equal(ask.confirmation_required, true);
    assert.equal(w.f.app.engine.head().position, head, 'asking for confirmation appends nothing');
    assert.deepEqual(
      await ok(w.owner, 'cancel_task', {
        task_id: cancelMe,
        reason: 'out of scope',
        confirmation_token: ask.confirm_token,
      }),
      { task_id: cancelMe, status: 'cancelled' },
    );
    const n = await task(w, g.goalId, cancelMe!);
    assert.deepEqual([n.status, n.lease_expires_at, n.failure_reason], ['cancelled', null, 'out of scope']);
    await refused(w.f, w.worker, 'complete_task', { task_id: cancelMe, summary: 'too late' }, 'ErrNotAssignee');
    await refused(w.f, w.helper, 'claim_task', { task_id: cancelMe }, 'ErrTaskNotApproved');
    await ok(w.worker, 'claim_task', { task_id: finishMe });
    await ok(w.worker, 'complete_task', { task_id: finishMe, summary: 'finished' });
    const again = await ok(w.owner, 'cancel_task', { task_id: finishMe, reason: 'no longer needed' });
    await refused(
      w.f,
      w.owner,
      'cancel_task',
      { task_id: finishMe, reason: 'no longer needed', confirmation_token: again.confirm_token },
      'ErrIllegalTransition',
    );
    await refused(w.f, w.worker, 'cancel_task', { task_id: finishMe, reason: 'agents cannot' }, 'ErrToolNotFound');
  });
});

describe('cost rollups', () => {
  it('TestRollupCosts: root → a → a1, plus b; a1 (100, 50¢) + b (200, 75¢) → root (300, 125¢, 4)', async (t) => {
    const w = await world(t);
    const g = await goalWith(
      w,
      node('root', { billing_code: 'docs' }, [
        node('task a', {}, [node('task a1')]),
        node('task b', { billing_code: 'qa' }),
      ]),
      { approval_mode: 'auto' },
    );
    const [root, a, a1, b] = g.taskIds as [number, number, number, number];
    const first = await ok(w.coord, 'report_usage', { task_id: a1, tokens: 100, cost_cents: 50, note: 'run 1' });
    assert.deepEqual(first, {
      task_id: a1,
      goal_id: g.goalId,
      goal_status: 'active',
      spent_tokens: 100,
      spent_dollars_cents: 50,
    });
    await ok(w.coord, 'report_usage', { task_id: b, tokens: 200, cost_cents: 75 });
    const snap = await snapshot(w, g.goalId);
    const tree = snap.tasks_tree as TaskNode[];
    assert.equal(tree.length, 1);
    assert.deepEqual(tree[0]!.rollup, { tokens: 300, dollars_cents: 125, task_count: 4 });
    assert.deepEqual(rollupSubtree(w.f.app.engine.db, root), { tokens: 300, cents: 125, taskCount: 4 });
    assert.deepEqual((await task(w, g.goalId, a)).rollup, { tokens: 100, dollars_cents: 50, task_count: 2 });
    assert.deepEqual(rollupSubtree(w.f.app.engine.db, a), { tokens: 100, cents: 50, taskCount: 2 });
    assert.deepEqual(
      [(await task(w, g.goalId, root)).spent_tokens, (await task(w, g.goalId, a1)).spent_dollars_cents],
      [0, 50],
      'spend is recorded on the leaf',
    );
    const goal = snap.goal as Body;
    assert.deepEqual([goal.spent_tokens, goal.spent_dollars_cents], [300, 125]);
    const breakdown = snap.cost_breakdown as { total: Body; by_billing_code: Body[] };
    assert.deepEqual(breakdown.total, { tokens: 300, dollars_cents: 125, task_count: 4 });
    assert.deepEqual(breakdown.by_billing_code, [
      { billing_code: 'docs', tokens: 100, dollars_cents: 50, task_count: 3 },
      { billing_code: 'qa', tokens: 200, dollars_cents: 75, task_count: 1 },
    ]);
    assert.deepEqual(rollupByBillingCode(w.f.app.engine.db, g.goalId, root), [
      { billingCode: 'docs', tokens: 100, cents: 50, taskCount: 3 },
      { billingCode: 'qa', tokens: 200, cents: 75, taskCount: 1 },
    ]);
    assert.deepEqual(rollupByBillingCode(w.f.app.engine.db, g.goalId, a), [
      { billingCode: 'docs', tokens: 100, cents: 50, taskCount: 2 },
    ]);
    assert.deepEqual(
      flatten(tree).map((n) => n.billing_code),
      ['docs', 'docs', 'docs', 'qa'],
      "a node without billing_code inherits its parent's",
    );
  });
});

describe('budget cascade, soft alert, hard pause', () => {
  const budgeted = (w: World, cents = 100) =>
    goalWith(
      w,
      node('Budgeted root', {}, [node('First leaf'), node('Second leaf', { heartbeat_config: { max_budget: 40 } })]),
      { budget_dollars_cents: cents },
    );

  it('spend under 80 % posts no alert and work proceeds', async (t) => {
    const w = await world(t);
    const g = await budgeted(w);
    await ok(w.coord, 'report_usage', { task_id: g.taskIds[1], tokens: 10, cost_cents: 70 });
    const out = await ok(w.coord, 'report_usage', { task_id: g.taskIds[1], tokens: 10, cost_cents: 5 });
    assert.equal(out.goal_status, 'active');
    assert.equal(withEvent(await channel(w, g.channelId), 'BudgetAlertRaised').length, 0);
    assert.equal((await ok(w.worker, 'claim_task', { task_id: g.taskIds[1] })).status, 'claimed');
  });

  it('independent test: 40¢ then 45¢ → one soft alert; a claim reserving 40¢ is refused, pauses the goal and DMs the owner; resume with a raised budget', async (t) => {
    const w = await world(t);
    const g = await budgeted(w);
    const [, first, second] = g.taskIds as [number, number, number];
    assert.equal(
      (await ok(w.coord, 'report_usage', { task_id: first, tokens: 400, cost_cents: 40 })).goal_status,
      'active',
    );
    assert.equal(withEvent(await channel(w, g.channelId), 'BudgetAlertRaised').length, 0, 'no alert at 40 %');
    assert.equal(
      (await ok(w.coord, 'report_usage', { task_id: first, tokens: 450, cost_cents: 45 })).goal_status,
      'active',
    );
    await ok(w.coord, 'report_usage', { task_id: first, tokens: 10, cost_cents: 1 });
    const alerts = withEvent(await channel(w, g.channelId), 'BudgetAlertRaised');
    assert.equal(alerts.length, 1, 'exactly one soft alert, however many reports follow');
    assert.match(
      alerts[0]!.body,
      /Budget soft alert: goal "Goal number \d+" has used 85% of its cents budget \(85 of 100 ¢\)/,
    );
    assert.equal(alerts[0]!.from, 'system');
    assert.deepEqual((await goalRow(w, g.goalId)).alert_80pct_posted, { tokens: false, dollars_cents: true });

    const text = await refusedWith(w.worker, 'claim_task', { task_id: second }, 'ErrGoalBudgetExceeded');
    assert.match(text, /86 committed \+ 40 requested > 100/);
    const goal = await goalRow(w, g.goalId);
    assert.equal(goal.status, 'paused');
    assert.equal((await task(w, g.goalId, second)).status, 'approved', 'the claim itself was not made');
    assert.equal(withEvent(await channel(w, g.channelId), 'GoalPaused').length, 1);
    const dms = (await inbox(w.owner)).filter((m) => m.metadata?.event === 'GoalPaused');
    assert.equal(dms.length, 1, 'the owner is DMed when a refused claim pauses the goal');
    assert.match(dms[0]!.body, new RegExp(`Goal #${g.goalId} .* was paused`));

    await refused(w.f, w.helper, 'claim_task', { task_id: first }, 'ErrGoalBudgetExceeded');
    await refused(w.f, w.worker, 'resume_goal', { goal_id: g.goalId }, 'ErrToolNotFound');
    const resumed = await ok(w.owner, 'resume_goal', { goal_id: g.goalId, new_budget_dollars_cents: 200 });
    assert.deepEqual(resumed, { goal_id: g.goalId, status: 'active' });
    const after = await goalRow(w, g.goalId);
    assert.deepEqual(
      [after.budget_dollars_cents, after.alert_80pct_posted],
      [200, { tokens: false, dollars_cents: false }],
      '86 < 80 % of 200: the alert re-arms',
    );
    assert.equal((await ok(w.worker, 'claim_task', { task_id: second })).status, 'claimed');
    assert.equal((await goalRow(w, g.goalId)).reserved_dollars_cents, 40);
  });

  it('spend reaching 100 % pauses the goal in the same report_usage, with one alert and a DM to the owner', async (t) => {
    const w = await world(t);
    const g = await budgeted(w);
    const [, first, second] = g.taskIds as [number, number, number];
    await ok(w.coord, 'report_usage', { task_id: first, tokens: 0, cost_cents: 40 });
    await ok(w.coord, 'report_usage', { task_id: first, tokens: 0, cost_cents: 45 });
    const crossing = await ok(w.coord, 'report_usage', { task_id: second, tokens: 0, cost_cents: 15 });
    assert.equal(crossing.goal_status, 'paused', 'paused by the very command that crossed 100 %');
    const messages = await channel(w, g.channelId);
    assert.equal(withEvent(messages, 'BudgetAlertRaised').length, 1);
    const paused = withEvent(messages, 'GoalPaused');
    assert.equal(paused.length, 1);
    assert.match(paused[0]!.body, /Budget hard cap: .* at 100% of its cents budget \(100 of 100 ¢\): active → paused/);
    const dms = (await inbox(w.owner)).filter((m) => m.metadata?.event === 'GoalPaused');
    assert.equal(dms.length, 1);
    // Spend is a fact: recorded even on a paused goal, and it pauses nothing twice.
    assert.equal(
      (await ok(w.coord, 'report_usage', { task_id: second, tokens: 0, cost_cents: 5 })).goal_status,
      'paused',
    );
    assert.equal(withEvent(await channel(w, g.channelId), 'GoalPaused').length, 1);
    await refused(w.f, w.helper, 'claim_task', { task_id: first }, 'ErrGoalBudgetExceeded');
    assert.match(
      await refused(w.f, w.owner, 'resume_goal', { goal_id: g.goalId }, 'ErrGoalBudgetExceeded'),
      /raise it to resume/,
    );
    await refused(
      w.f,
      w.owner,
      'resume_goal',
      { goal_id: g.goalId, new_budget_dollars_cents: 105 },
      'ErrGoalBudgetExceeded',
    );
    // The owner raises the budget and resumes; the alert re-arms below 80 % of the new budget.
    assert.equal(
      (await ok(w.owner, 'resume_goal', { goal_id: g.goalId, new_budget_dollars_cents: 1000 })).status,
      'active',
    );
    assert.equal((await ok(w.helper, 'claim_task', { task_id: first })).status, 'claimed');
    await ok(w.helper, 'report_usage', { task_id: first, tokens: 0, cost_cents: 700 });
    assert.equal(
      withEvent(await channel(w, g.channelId), 'BudgetAlertRaised').length,
      2,
      're-armed: one more alert at 80 % of 1000',
    );
  });

  it('a renewal re-reserves rather than adding; completing and cancelling release the reservation', async (t) => {
    const w = await world(t);
    const g = await goalWith(
      w,
      node('Root', {}, [
        node('Finish me', { heartbeat_config: { max_budget: 40 } }),
        node('Cancel me', { heartbeat_config: { max_budget: 30 } }),
      ]),
      { budget_dollars_cents: 100 },
    );
    const [, finishMe, cancelMe] = g.taskIds as [number, number, number];
    await ok(w.worker, 'claim_task', { task_id: finishMe });
    w.clock.advance(minutes(10));
    assert.equal((await ok(w.worker, 'claim_task', { task_id: finishMe })).renewed, true);
    await ok(w.helper, 'claim_task', { task_id: cancelMe });
    assert.equal((await goalRow(w, g.goalId)).reserved_dollars_cents, 70, 'renewing keeps 40, not 80');
    await ok(w.worker, 'complete_task', { task_id: finishMe, summary: 'done' });
    assert.equal((await goalRow(w, g.goalId)).reserved_dollars_cents, 30);
    const ask = await ok(w.owner, 'cancel_task', { task_id: cancelMe, reason: 'not needed' });
    await ok(w.owner, 'cancel_task', {
      task_id: cancelMe,
      reason: 'not needed',
      confirmation_token: ask.confirm_token,
    });
    assert.equal((await goalRow(w, g.goalId)).reserved_dollars_cents, 0);
  });

  it('a claim on an expired lease does not count the reservation it replaces', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Root', {}, [node('Expensive leaf', { heartbeat_config: { max_budget: 60 } })]), {
      budget_dollars_cents: 100,
    });
    const leaf = g.taskIds[1]!;
    await ok(w.worker, 'claim_task', { task_id: leaf });
    w.clock.advance(minutes(31)); // no sweep yet: the stale reservation of 60¢ is still on the books
    const claimed = await ok(w.helper, 'claim_task', { task_id: leaf });
    assert.equal(claimed.status, 'claimed');
    const goal = await goalRow(w, g.goalId);
    assert.deepEqual([goal.status, goal.reserved_dollars_cents], ['active', 60]);
  });

  it('a claim that would be refused anyway (held by another, or not approved) neither pauses the goal nor appends', async (t) => {
    const w = await world(t);
    const g = await goalWith(
      w,
      node('Root', {}, [
        node('Held leaf', { heartbeat_config: { max_budget: 60 } }),
        node('Finished leaf', { heartbeat_config: { max_budget: 20 } }),
      ]),
      { budget_dollars_cents: 100 },
    );
    const [, held, finished] = g.taskIds as [number, number, number];
    await ok(w.worker, 'claim_task', { task_id: held });
    await refused(w.f, w.helper, 'claim_task', { task_id: held }, 'ErrAlreadyClaimed');
    await ok(w.helper, 'claim_task', { task_id: finished });
    await ok(w.helper, 'complete_task', { task_id: finished, summary: 'done' });
    await ok(w.helper, 'report_usage', { task_id: finished, tokens: 0, cost_cents: 30 });
    await refused(w.f, w.reviewer, 'claim_task', { task_id: finished }, 'ErrTaskNotApproved');
    assert.equal((await goalRow(w, g.goalId)).status, 'active');
  });

  it('a token budget alerts and pauses the same way', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Token hungry'), { budget_tokens: 1000 });
    const id = g.taskIds[0]!;
    assert.equal(
      (await ok(w.coord, 'report_usage', { task_id: id, tokens: 799, cost_cents: 0 })).goal_status,
      'active',
    );
    assert.equal(withEvent(await channel(w, g.channelId), 'BudgetAlertRaised').length, 0);
    assert.equal((await ok(w.coord, 'report_usage', { task_id: id, tokens: 1, cost_cents: 0 })).goal_status, 'active');
    assert.match(
      withEvent(await channel(w, g.channelId), 'BudgetAlertRaised')[0]!.body,
      /80% of its tokens budget \(800 of 1000 tokens\)/,
    );
    assert.equal(
      (await ok(w.coord, 'report_usage', { task_id: id, tokens: 200, cost_cents: 0 })).goal_status,
      'paused',
    );
    assert.deepEqual((await goalRow(w, g.goalId)).alert_80pct_posted, { tokens: true, dollars_cents: false });
    assert.equal((await inbox(w.owner)).filter((m) => m.metadata?.event === 'GoalPaused').length, 1);
  });

  it('a task budget caps its subtree: a claim over it is ErrTaskBudgetExceeded and the goal keeps running', async (t) => {
    const w = await world(t);
    const g = await goalWith(
      w,
      node('Capped root', { budget_dollars_cents: 30 }, [
        node('Greedy leaf', { heartbeat_config: { max_budget: 40 } }),
      ]),
      { budget_dollars_cents: 100 },
    );
    await refused(w.f, w.worker, 'claim_task', { task_id: g.taskIds[1] }, 'ErrTaskBudgetExceeded');
    assert.equal((await goalRow(w, g.goalId)).status, 'active');
  });
});

describe('bad input to the task tools appends nothing', () => {
  it('is refused with its code', async (t) => {
    const w = await world(t);
    const g = await goalWith(
      w,
      node('Root', {}, [node('Leaf', { verifier_config: { kind: 'peer', agent_id: w.ids.reviewer } })]),
    );
    const [root, leaf] = g.taskIds as [number, number];
    await ok(w.worker, 'claim_task', { task_id: leaf });
    const cases: [Client, string, Body, string][] = [
      [w.worker, 'claim_task', {}, 'ErrInvalidInput'],
      [w.worker, 'claim_task', { task_id: '1' }, 'ErrInvalidInput'],
      [w.worker, 'claim_task', { task_id: -1 }, 'ErrInvalidInput'],
      [w.worker, 'claim_task', { task_id: 0 }, 'ErrInvalidInput'],
      [w.worker, 'claim_task', { task_id: 1.5 }, 'ErrInvalidInput'],
      [w.worker, 'claim_task', { task_id: root, lease_minutes: 60 }, 'ErrInvalidInput'],
      [w.worker, 'claim_task', { task_id: 9999 }, 'ErrTaskNotFound'],
      [w.owner, 'claim_task', { task_id: root }, 'ErrForbidden'],
      [w.stranger, 'claim_task', { task_id: root }, 'ErrTaskNotFound'],
      [w.worker, 'complete_task', { task_id: leaf }, 'ErrInvalidInput'],
      [w.worker, 'complete_task', { task_id: leaf, summary: '   ' }, 'ErrInvalidInput'],
      [w.worker, 'complete_task', { task_id: leaf, summary: 42 }, 'ErrInvalidInput'],
      [w.worker, 'complete_task', { task_id: leaf, summary: 'ok', artifact_message_ids: ['x'] }, 'ErrInvalidInput'],
      [w.worker, 'complete_task', { task_id: leaf, summary: 'ok', artifact_message_ids: 5 }, 'ErrInvalidInput'],
      [w.worker, 'complete_task', { task_id: leaf, summary: 'ok', status: 'done' }, 'ErrInvalidInput'],
      [w.worker, 'complete_task', { task_id: leaf, summary: 'ok', artifact_message_ids: [9999] }, 'ErrNotFound'],
      [w.worker, 'complete_task', { task_id: 9999, summary: 'ok' }, 'ErrTaskNotFound'],
      [w.worker, 'complete_task', { task_id: root, summary: 'not claimed' }, 'ErrNotAssignee'],
      [w.helper, 'complete_task', { task_id: leaf, summary: 'not mine' }, 'ErrNotAssignee'],
      [w.owner, 'complete_task', { task_id: leaf, summary: 'owner' }, 'ErrForbidden'],
      [w.stranger, 'complete_task', { task_id: leaf, summary: 'ok' }, 'ErrTaskNotFound'],
      [w.worker, 'release_task', { task_id: leaf }, 'ErrInvalidInput'],
      [w.worker, 'release_task', { task_id: leaf, reason: 'no' }, 'ErrInvalidInput'],
      [w.worker, 'release_task', { task_id: 'leaf', reason: 'because' }, 'ErrInvalidInput'],
      [w.worker, 'release_task', { task_id: 9999, reason: 'because' }, 'ErrTaskNotFound'],
      [w.owner, 'release_task', { task_id: leaf, reason: 'because' }, 'ErrForbidden'],
      [w.stranger, 'release_task', { task_id: leaf, reason: 'because' }, 'ErrTaskNotFound'],
      [w.reviewer, 'verify_task', { task_id: leaf }, 'ErrInvalidInput'],
      [w.reviewer, 'verify_task', { task_id: leaf, verdict: 'maybe' }, 'ErrInvalidInput'],
      [w.reviewer, 'verify_task', { task_id: leaf, verdict: 'approve', score: 5 }, 'ErrInvalidInput'],
      [w.reviewer, 'verify_task', { task_id: leaf, verdict: 'approve', reason: 7 }, 'ErrInvalidInput'],
      [w.reviewer, 'verify_task', { task_id: 9999, verdict: 'approve' }, 'ErrTaskNotFound'],
      [w.reviewer, 'verify_task', { task_id: leaf, verdict: 'approve' }, 'ErrTaskNotAwaitingVerification'],
      [w.owner, 'verify_task', { task_id: 9999, verdict: 'approve' }, 'ErrTaskNotFound'],
      [w.stranger, 'verify_task', { task_id: leaf, verdict: 'approve' }, 'ErrTaskNotFound'],
      [w.worker, 'report_usage', { task_id: leaf, tokens: -1, cost_cents: 0 }, 'ErrInvalidInput'],
      [w.worker, 'report_usage', { task_id: leaf, tokens: 0, cost_cents: -5 }, 'ErrInvalidInput'],
      [w.worker, 'report_usage', { task_id: leaf, tokens: 1.5, cost_cents: 0 }, 'ErrInvalidInput'],
      [w.worker, 'report_usage', { task_id: leaf, tokens: '100', cost_cents: 0 }, 'ErrInvalidInput'],
      [w.worker, 'report_usage', { task_id: leaf, tokens: 100 }, 'ErrInvalidInput'],
      [w.worker, 'report_usage', { task_id: leaf, tokens: 100, cost_cents: 5, cost_usd: 0.05 }, 'ErrInvalidInput'],
      [w.worker, 'report_usage', { task_id: leaf, tokens: 100, cost_cents: 5, note: 12 }, 'ErrInvalidInput'],
      [w.worker, 'report_usage', { task_id: 9999, tokens: 100, cost_cents: 5 }, 'ErrTaskNotFound'],
      [w.stranger, 'report_usage', { task_id: leaf, tokens: 100, cost_cents: 5 }, 'ErrTaskNotFound'],
      [w.owner, 'cancel_task', { task_id: leaf }, 'ErrInvalidInput'],
      [w.owner, 'cancel_task', { task_id: leaf, reason: 'x' }, 'ErrInvalidInput'],
      [w.owner, 'cancel_task', { task_id: 'all', reason: 'because' }, 'ErrInvalidInput'],
      [w.owner, 'cancel_task', { task_id: leaf, reason: 'because', force: true }, 'ErrInvalidInput'],
      [
        w.owner,
        'cancel_task',
        { task_id: leaf, reason: 'because', confirmation_token: 'made-up' },
        'ErrConfirmationInvalid',
      ],
      [w.worker, 'cancel_task', { task_id: leaf, reason: 'because' }, 'ErrToolNotFound'],
    ];
    for (const [client, tool, args, code] of cases) await refused(w.f, client, tool, args, code);
    assert.deepEqual(
      [(await task(w, g.goalId, leaf)).status, (await task(w, g.goalId, root)).status],
      ['claimed', 'approved'],
    );
  });

  it('cancel_task on a task that does not exist (or of another tenant) is ErrTaskNotFound once confirmed', async (t) => {
    const w = await world(t);
    const g = await goalWith(w, node('Mine'));
    const other = await w.f.connect(w.f.addOwner('second-owner').token);
    for (const [client, taskId] of [
      [w.owner, 9999],
      [other, g.taskIds[0]!],
    ] as [Client, number][]) {
      const ask = await ok(client, 'cancel_task', { task_id: taskId, reason: 'because' });
      await refused(
        w.f,
        client,
        'cancel_task',
        { task_id: taskId, reason: 'because', confirmation_token: ask.confirm_token },
        'ErrTaskNotFound',
      );
    }
    assert.equal((await task(w, g.goalId, g.taskIds[0]!)).status, 'approved');
  });
});
