import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { GoalEvent } from '../../../src/events/goals.js';
import type { TaskCreated } from '../../../src/events/tasks.js';
import { PgEventStore } from '../../../src/engine/pg/store.js';
import { PgTail } from '../../../src/engine/pg/tail.js';
import type { TenantEvent } from '../../../src/engine/store-port.js';
import { pgScratch, pgSkip } from '../../helpers/pg.js';
import { spawnScript, type Child } from '../../helpers/processes.js';

/**
 * Several nodes (processes) on one PostgreSQL store: one leader per tenant for the background jobs, a
 * takeover when the leader is killed -9, and every node's commits live on every other node.
 */
const NODE = fileURLToPath(new URL('../../helpers/pg-node.ts', import.meta.url));
const children: Child[] = [];
after(() => children.forEach((c) => c.proc.kill('SIGKILL')));

function node(args: string[]): Child {
  const child = spawnScript(NODE, args);
  children.push(child);
  return child;
}

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return Date.now() - start;
}

/** An approved project task (no goal, so no budget gate), as the task decider folds it. */
function taskCreated(): TaskCreated {
  const notice = { messageId: 0, channelId: 1, body: 'created', metadata: {} };
  return {
    type: 'TaskCreated',
    data: {
      taskId: 1,
      goalId: null,
      parentId: null,
      depth: 0,
      ancestry: [],
      title: 'One task',
      description: 'for a hundred agents',
      acceptanceCriteria: 'claimed once',
      billingCode: 'race',
      budgets: { tokens: null, cents: null },
      verifier: { kind: 'auto' },
      heartbeat: null,
      status: 'approved',
      proposalId: null,
      channelId: 1,
      by: { key: 'user-1', name: 'owner' },
      notice,
    },
  };
}

/** An active goal with a budget of 100 tokens, as the goal decider folds it. */
function activeGoal(): GoalEvent[] {
  const notice = { messageId: 0, channelId: 1, body: 'activated', metadata: {} };
  return [
    {
      type: 'GoalCreated',
      data: {
        goalId: 1,
        ownerId: 1,
        slug: 'race',
        title: 'Race',
        description: 'spend reports from every node',
        channelId: 1,
        coordinatorAgentId: 1,
        coordinatorTemplate: 'default',
        budgets: { tokens: 100, cents: null },
        maxSpawnDepth: 1,
        approvalMode: 'auto',
        by: 'user-1',
      },
    },
    { type: 'GoalActivated', data: { goalId: 1, from: 'draft', proposalId: null, notice } },
  ];
}

interface RaceResult {
  won: number;
  refused: Record<string, number>;
}

/** Starts one node per count (pg-node.ts `mode`), lets them all go at once, and sums what they report. */
async function race(
  mode: 'claim' | 'spend',
  url: string,
  counts: number[],
): Promise<{ won: number; refused: Record<string, number>; each: RaceResult[] }> {
  const nodes = counts.map((n, i) => node([mode, url, String(i + 1), String(n)]));
  await Promise.all(nodes.map((n) => n.waitForLine('ready')));
  for (const n of nodes) n.send('go');
  await Promise.all(nodes.map((n) => n.exit));
  const each = nodes.map((n) => JSON.parse(n.lines[n.lines.length - 1]!) as RaceResult);
  const refused: Record<string, number> = {};
  for (const r of each) for (const [code, k] of Object.entries(r.refused)) refused[code] = (refused[code] ?? 0) + k;
  return { won: each.reduce((a, r) => a + r.won, 0), refused, each };
}

const queue = (store: PgEventStore, tenant: string, run: string) =>
  store.append({
    tenant,
    streamId: run,
    expected: 'no_stream',
    events: [{ type: 'RunQueued', data: {} }],
    actor: 'owner',
  });

describe('nodes sharing one PostgreSQL store', { skip: pgSkip }, () => {
  it('runs each tenant’s jobs on one node; after kill -9 another takes over, fails the cut run and starts queued runs once', async (t) => {
    const scratch = pgScratch();
    const store = await PgEventStore.open(scratch.url);
    try {
      // The tenants exist before the nodes compete for them.
      for (const t of ['t1', 't2'])
        await store.append({
          tenant: t,
          streamId: 'team-1',
          expected: 'any',
          events: [{ type: 'TeamCreated', data: {} }],
          actor: 'owner',
        });
      const a = node(['lead', scratch.url, 'a', 't1,t2', '1500']);
      await Promise.all([a.waitForLine('ready'), a.waitForLine('gain t1'), a.waitForLine('gain t2')]);
      const others = [
        node(['lead', scratch.url, 'b', 't1,t2', '1500']),
        node(['lead', scratch.url, 'c', 't1,t2', '1500']),
      ];
      await Promise.all(others.map((n) => n.waitForLine('ready')));
      await new Promise((r) => setTimeout(r, 500)); // a few of the followers' rounds
      assert.deepEqual(
        others.flatMap((n) => n.lines.filter((l) => l.startsWith('gain'))),
        [],
        'a tenant has one leader',
      );

      await queue(store, 't1', 'run-1');
      await a.waitForLine('started t1 run-1');
      a.proc.kill('SIGKILL');
      await a.exit;
      const killedAt = Date.now();
      await queue(store, 't1', 'run-2');
      await queue(store, 't2', 'run-3');

      const gained = (t: string) => others.filter((n) => n.lines.includes(`gain ${t}`));
      await until(() => gained('t1').length > 0 && gained('t2').length > 0, 10_000, 'a new leader for t1 and t2');
      const takeoverMs = Date.now() - killedAt;
      assert.ok(takeoverMs < 5000, `takeover took ${takeoverMs} ms`);
      t.diagnostic(`takeover after kill -9: ${takeoverMs} ms`);
      assert.equal(gained('t1').length, 1);
      assert.equal(gained('t2').length, 1);

      const finished = (run: string) =>
        others.some((n) => n.lines.some((l) => l.endsWith(` ${run}`) && l.startsWith('finished')));
      await until(() => finished('run-2') && finished('run-3'), 10_000, 'the queued runs to finish');
      const lines = others.flatMap((n) => n.lines);
      for (const run of ['t1 run-2', 't2 run-3'])
        assert.equal(lines.filter((l) => l === `started ${run}`).length, 1, `${run} started once`);
      assert.deepEqual(
        lines.filter((l) => l.startsWith('failed')),
        ['failed t1 run-1'],
      );
      const types = async (t: string, run: string) => (await store.readStream(t, run)).map((e) => e.type);
      assert.deepEqual(await types('t1', 'run-1'), ['RunQueued', 'RunStarted', 'RunFailed']);
      assert.deepEqual(await types('t1', 'run-2'), ['RunQueued', 'RunStarted', 'RunFinished']);
      assert.deepEqual(await types('t2', 'run-3'), ['RunQueued', 'RunStarted', 'RunFinished']);
      assert.deepEqual(
        [...(await store.verify())].map(([t, r]) => [t, r.ok]),
        [
          ['t1', true],
          ['t2', true],
        ],
      );
      assert.ok(!lines.some((l) => l.startsWith('error')), lines.join('\n'));
    } finally {
      for (const c of children) c.proc.kill('SIGKILL');
      await store.close();
      await scratch.drop();
    }
  });

  it('delivers another node’s commits to a tail at once, woken by NOTIFY (no polling), in chain order', async () => {
    const scratch = pgScratch();
    const store = await PgEventStore.open(scratch.url);
    const seen: TenantEvent[] = [];
    const tail = await PgTail.start(store, { pollMs: 600_000, onEvents: (events) => void seen.push(...events) });
    try {
      const writer = node(['write', scratch.url, 'acme', '20']);
      await until(() => seen.length === 20, 10_000, '20 events on the tail');
      await writer.exit;
      assert.deepEqual(
        seen.map((e) => e.position),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.deepEqual(
        seen.map((e) => (e.data as { i: number }).i),
        Array.from({ length: 20 }, (_, i) => i),
      );
    } finally {
      await tail.stop();
      await store.close();
      await scratch.drop();
    }
  });

  it('lets exactly one of 100 agents on 3 nodes claim a task, with the real task decider', async () => {
    const scratch = pgScratch();
    const store = await PgEventStore.open(scratch.url);
    try {
      await store.append({
        tenant: 'acme',
        streamId: 'task-1',
        expected: 'no_stream',
        events: [taskCreated()],
        actor: 'owner',
      });
      const result = await race('claim', scratch.url, [34, 33, 33]);
      assert.deepEqual([result.won, result.refused], [1, { ErrAlreadyClaimed: 99 }], JSON.stringify(result.each));
      const task = await store.readStream('acme', 'task-1');
      assert.deepEqual(
        task.map((e) => e.type),
        ['TaskCreated', 'TaskClaimed'],
      );
      assert.equal((await store.sequences('acme')).get('message'), 1, 'one transition notice, one message id');
      assert.equal((await store.verify()).get('acme')?.ok, true);
    } finally {
      await store.close();
      await scratch.drop();
    }
  });

  it('raises exactly one 80 % alert and one pause when 60 spend reports race on 3 nodes, with the real goal decider', async () => {
    const scratch = pgScratch();
    const store = await PgEventStore.open(scratch.url);
    try {
      await store.append({
        tenant: 'acme',
        streamId: 'goal-1',
        expected: 'no_stream',
        events: activeGoal(),
        actor: 'owner',
      });
      const result = await race('spend', scratch.url, [20, 20, 20]);
      assert.deepEqual([result.won, result.refused], [60, {}], JSON.stringify(result.each));
      const types = (await store.readStream('acme', 'goal-1')).map((e) => e.type);
      assert.equal(types.filter((t) => t === 'BudgetAlertRaised').length, 1, types.join());
      assert.equal(types.filter((t) => t === 'GoalPaused').length, 1, types.join());
      assert.equal((await store.verify()).get('acme')?.ok, true);
    } finally {
      await store.close();
      await scratch.drop();
    }
  });
});
