import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { productProjections } from '../../../src/app.js';
import { readSchema } from '../../../src/engine/pg/projections.js';
import { PgEventStore } from '../../../src/engine/pg/store.js';
import { PgTail } from '../../../src/engine/pg/tail.js';
import type { TenantEvent } from '../../../src/engine/store-port.js';
import { pgScratch, pgSkip } from '../../helpers/pg.js';
import { spawnScript, type Child } from '../../helpers/processes.js';
import { agentOf, raceTeam, type RaceTeam } from '../../helpers/race-team.js';
import { claimTaskUnit } from '../../../src/actions/tasks/claim.js';
import { assertRebuildEqual } from '../../helpers/read-models.js';

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

interface RaceResult {
  won: number;
  refused: Record<string, number>;
}

/** Starts one node per slice of the team's agents (pg-node.ts `mode`), lets them all go at once, and sums what they report. */
async function race(
  mode: 'claim' | 'spend',
  url: string,
  team: RaceTeam,
  counts: number[],
): Promise<{ won: number; refused: Record<string, number>; each: RaceResult[] }> {
  let from = 0;
  const nodes = counts.map((n, i) =>
    node([mode, url, String(i + 1), JSON.stringify({ ...team, slice: [from, (from += n)] })]),
  );
  await Promise.all(nodes.map((n) => n.waitForLine('ready')));
  for (const n of nodes) n.send('go');
  await Promise.all(nodes.map((n) => n.exit));
  const each = nodes.map((n) => JSON.parse(n.lines[n.lines.length - 1]!) as RaceResult);
  const refused: Record<string, number> = {};
  for (const r of each) for (const [code, k] of Object.entries(r.refused)) refused[code] = (refused[code] ?? 0) + k;
  return { won: each.reduce((a, r) => a + r.won, 0), refused, each };
}

/**
 * A team moved to a fresh PostgreSQL schema (test/helpers/race-team.ts) and a store on it with the read
 * models. After the body, as after every test of the issue: the chain verifies and every read model
 * equals a fresh rebuild.
 */
async function withTeam(
  agents: number,
  budgetTokens: number,
  body: (t: { url: string; schema: string; team: RaceTeam; store: PgEventStore }) => Promise<void>,
): Promise<void> {
  const scratch = pgScratch();
  try {
    const team = await raceTeam(scratch.url, agents, budgetTokens);
    const store = await PgEventStore.open(scratch.url, { projections: productProjections });
    try {
      await body({ url: scratch.url, schema: scratch.schema, team, store });
      assert.equal((await store.verify()).get(team.tenant)?.ok, true);
      await assertRebuildEqual(store, team.tenant);
    } finally {
      await store.close();
    }
  } finally {
    await scratch.drop();
  }
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

  it('lets exactly one of 100 agents on 3 nodes claim a task, with the real claim_task action', () =>
    withTeam(100, 1000, async ({ url, schema, team, store }) => {
      const result = await race('claim', url, team, [34, 33, 33]);
      assert.deepEqual([result.won, result.refused], [1, { ErrAlreadyClaimed: 99 }], JSON.stringify(result.each));
      const task = await store.readStream(team.tenant, `task-${team.taskId}`);
      assert.deepEqual(
        task.map((e) => e.type),
        ['TaskCreated', 'TaskClaimed'],
      );
      const row = await store.pool.query<{ status: string; assignee_agent_id: string }>(
        `SELECT status, assignee_agent_id FROM "${readSchema(schema, team.tenant)}".tasks WHERE task_id = $1`,
        [team.taskId],
      );
      assert.equal(row.rows[0]!.status, 'claimed', 'the read model shows the one claim');
      assert.equal(Number(row.rows[0]!.assignee_agent_id), (task[1]!.data as { agentId: number }).agentId);
    }));

  it('raises exactly one 80 % alert and one pause when 60 spend reports race on 3 nodes, with the real report_usage action', () =>
    // 60 reports of 2 tokens on a budget of 100: the alert at 80, the pause at 100, whatever the order.
    withTeam(60, 100, async ({ url, schema, team, store }) => {
      const result = await race('spend', url, team, [20, 20, 20]);
      assert.deepEqual([result.won, result.refused], [60, {}], JSON.stringify(result.each));
      const types = (await store.readStream(team.tenant, `goal-${team.goalId}`)).map((e) => e.type);
      assert.equal(types.filter((t) => t === 'BudgetAlertRaised').length, 1, types.join());
      assert.equal(types.filter((t) => t === 'GoalPaused').length, 1, types.join());
      const rm = readSchema(schema, team.tenant);
      const goal = await store.pool.query<{ status: string; spent_tokens: string }>(
        `SELECT g.status, t.spent_tokens FROM "${rm}".goals g JOIN "${rm}".goal_totals t USING (goal_id) WHERE goal_id = $1`,
        [team.goalId],
      );
      assert.deepEqual([goal.rows[0]!.status, Number(goal.rows[0]!.spent_tokens)], ['paused', 120]);
      // The pause DMs the owner once, in a dm channel created once.
      const dms = await store.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${rm}".messages WHERE body LIKE '%was paused%'`,
      );
      assert.equal(Number(dms.rows[0]!.n), 1);
    }));

  it("sweeps each tenant's expired leases on one node, and after kill -9 on another, each claim expired once", () =>
    withTeam(2, 1000, async ({ url, team, store }) => {
      const claim = (i: number) =>
        store.unit(team.tenant, { actor: `agent:${i}` }, () => claimTaskUnit(agentOf(team, i), team.taskId, 300));
      const nodes = [node(['sweep', url, '1', '150']), node(['sweep', url, '2', '150'])];
      await Promise.all(nodes.map((n) => n.waitForLine('ready')));
      await until(() => nodes.some((n) => n.lines.includes(`gain ${team.tenant}`)), 5000, 'a leader');
      const leader = nodes.find((n) => n.lines.includes(`gain ${team.tenant}`))!;
      const follower = nodes.find((n) => n !== leader)!;
      const expired = () => nodes.flatMap((n) => n.lines.filter((l) => l.startsWith(`expired ${team.tenant} `)));
      await claim(0);
      await until(() => expired().length === 1, 5000, 'the first expiry');
      assert.match(expired()[0]!, new RegExp(`^expired ${team.tenant} ${team.taskId} by `));
      assert.ok(
        leader.lines.some((l) => l.startsWith('expired')),
        'the leader swept',
      );
      assert.ok(!follower.lines.includes(`gain ${team.tenant}`), 'one node leads the tenant');
      leader.proc.kill('SIGKILL');
      await leader.exit;
      await claim(1);
      await until(() => follower.lines.includes(`gain ${team.tenant}`), 5000, 'the takeover');
      await until(() => expired().length === 2, 5000, 'the second expiry');
      await new Promise((r) => setTimeout(r, 500)); // more sweeps: nothing more to expire
      assert.equal(expired().length, 2, expired().join('\n'));
      const types = (await store.readStream(team.tenant, `task-${team.taskId}`)).map((e) => e.type);
      assert.deepEqual(
        types.filter((t) => t === 'TaskClaimed' || t === 'ClaimExpired'),
        ['TaskClaimed', 'ClaimExpired', 'TaskClaimed', 'ClaimExpired'],
      );
      follower.send('stop');
      await follower.exit;
    }));
});
