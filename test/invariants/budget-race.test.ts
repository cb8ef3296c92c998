import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { setImmediate as tick } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { registerAgent } from '../../src/actions/principals.js';
import { claimTask, reportUsage } from '../../src/actions/tasks.js';
import { openApp, type App } from '../../src/app.js';
import { databaseFile } from '../../src/config.js';
import { openDatabase } from '../../src/engine/db.js';
import { isDomainError } from '../../src/errors.js';
import { readAll } from '../../src/engine/store.js';
import { channelMessages } from '../../src/projections/channel-queries.js';
import { getAgent } from '../../src/projections/principal-queries.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { callTool, textOf } from '../helpers/mcp.js';
import { prng, seedFrom } from '../helpers/prng.js';
import { spawnScript, type Child } from '../helpers/processes.js';
import { ok } from '../helpers/calls.js';

/**
 * Budgets under concurrent spend: report_usage calls that together cross 80 % and 100 %
 * of a goal's cents budget raise exactly one BudgetAlertRaised and exactly one GoalPaused, each in the
 * command whose cost crossed the line — so no reader ever sees spend ≥ budget while the goal is still
 * active (nor spend ≥ 80 % without the alert). Readers run all along: get_goal over its own HTTP
 * session, and a second, read-only SQLite connection reading goals + goal_totals in one read
 * transaction; each reading must also be of one moment (the goal's spend equals its tasks' spend).
 * First from 8 HTTP sessions, then from 3 OS processes writing to the same data dir — where get_goal
 * once read its parts in separate statements and could mix two moments (fixed: goalSnapshot reads in
 * one read transaction).
 *
 * For the second part this file is also the child: `node --import tsx budget-race.test.ts usage-child …`
 * prints "ready", waits for "go", reports its usage as fast as it can and prints a JSON summary.
 */
const SELF = fileURLToPath(import.meta.url);
const CHILD_MODE = 'usage-child';

interface ChildSummary {
  name: string;
  reports: number;
  cents: number;
  statuses: Record<string, number>;
}

/** A child: `count` reports on its task, `1 + i % 20` cents each, each answered with the goal's status. */
async function child([dataDir, agentIdArg, ownerIdArg, name, taskIdArg, countArg]: string[]): Promise<void> {
  try {
    const app = openApp({ dataDir: dataDir! });
    const by = { key: `agent-${agentIdArg}`, name: name!, tenant: Number(ownerIdArg) };
    const stdin = createInterface({ input: process.stdin });
    const go = new Promise<void>((resolve) => stdin.on('line', (line) => line === 'go' && resolve()));
    process.stdout.write('ready\n');
    await go;
    stdin.close();
    const summary: ChildSummary = { name: name!, reports: 0, cents: 0, statuses: {} };
    // A writer that commits and at once begins again keeps SQLite's write lock from the others (they
    // poll for it); a pause of under a millisecond now and then lets the three writers interleave.
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < Number(countArg); i++) {
      if (i % 2 === 1) Atomics.wait(pause, 0, 0, 0.5);
      const cents = centsOf(i);
      const { goal } = reportUsage(app, by, Number(taskIdArg), 100, cents, `${name}:${i}`, { actor: `agent:${name}` });
      summary.reports += 1;
      summary.cents += cents;
      summary.statuses[goal!.status] = (summary.statuses[goal!.status] ?? 0) + 1;
    }
    app.engine.close();
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (e) {
    process.stderr.write(
      `usage-child ${name} failed (${isDomainError(e) ? e.code : 'no code'}): ${(e as Error)?.stack ?? String(e)}\n`,
    );
    process.exit(1);
  }
}

const centsOf = (i: number) => 1 + (i % 20);

/** One reading of the goal's budget state, as a reader saw it. */
interface Observation {
  via: string;
  status: string;
  budget: number;
  spent: number;
  alerted: boolean;
  /** The same spend summed over the goal's tasks, read with it (it must agree: one consistent read). */
  spentByTasks: number;
}

/** The invariants every single observation must hold. */
class Observer {
  readonly seen: Observation[] = [];
  private last = new Map<string, number>();
  constructor(private readonly budget: number) {}

  observe(o: Observation): void {
    this.seen.push(o);
    const where = `${o.via} observation #${this.seen.length}: ${JSON.stringify(o)}`;
    assert.equal(o.budget, this.budget, where);
    assert.equal(o.spentByTasks, o.spent, `the goal's spend and its tasks' spend disagree: a torn read — ${where}`);
    if (o.spent >= o.budget)
      assert.notEqual(o.status, 'active', `spend at or over the budget while the goal is active — ${where}`);
    if (o.spent * 10 >= o.budget * 8)
      assert.equal(o.alerted, true, `spend at or over 80 % without the alert — ${where}`);
    if (o.spent < o.budget) assert.equal(o.status, 'active', `paused before the budget was used up — ${where}`);
    assert.ok(o.spent >= (this.last.get(o.via) ?? 0), `spend went down — ${where}`);
    this.last.set(o.via, o.spent);
  }

  count(via: string, f: (o: Observation) => boolean = () => true): number {
    return this.seen.filter((o) => o.via === via && f(o)).length;
  }
}

/** A read-only connection of its own: goals and goal_totals read in one read transaction. */
function sqlReader(dataDir: string, goalId: number) {
  const db = openDatabase(databaseFile(dataDir), { readonly: true });
  const goal = db.prepare('SELECT status, budget_cents AS budget, alert_cents AS alerted FROM goals WHERE goal_id = ?');
  const totals = db.prepare('SELECT spent_cents AS spent FROM goal_totals WHERE goal_id = ?');
  const byTasks = db.prepare('SELECT coalesce(sum(spent_cents), 0) AS spent FROM tasks WHERE goal_id = ?');
  const read = db.transaction((): Observation => {
    const g = goal.get(goalId) as { status: string; budget: number; alerted: number };
    const t = totals.get(goalId) as { spent: number } | undefined;
    const tasks = byTasks.get(goalId) as { spent: number };
    return {
      via: 'sql',
      status: g.status,
      budget: g.budget,
      spent: t?.spent ?? 0,
      alerted: g.alerted === 1,
      spentByTasks: tasks.spent,
    };
  });
  return { read: () => read.deferred(), close: () => db.close() };
}

async function readGoal(client: Client, goalId: number): Promise<Observation> {
  const { result, body } = await callTool(client, 'get_goal', { goal_id: goalId });
  assert.ok(!result.isError, textOf(result));
  const g = body.goal as {
    status: string;
    budget_dollars_cents: number;
    spent_dollars_cents: number;
    alert_80pct_posted: { dollars_cents: boolean };
  };
  const total = (body.cost_breakdown as { total: { dollars_cents: number } }).total.dollars_cents;
  return {
    via: 'get_goal',
    status: g.status,
    budget: g.budget_dollars_cents,
    spent: g.spent_dollars_cents,
    alerted: g.alert_80pct_posted.dollars_cents,
    spentByTasks: total,
  };
}

/**
 * Reads until `done` settles: get_goal calls one after another, and the SQL reader between every turn
 * of the event loop. Returns once both stopped.
 */
async function readAlong(
  f: HttpFixture,
  reader: Client,
  goalId: number,
  observer: Observer,
  done: Promise<unknown>,
): Promise<void> {
  let finished = false;
  const stop = done.finally(() => (finished = true));
  const sql = sqlReader(f.app.dataDir, goalId);
  const viaMcp = (async () => {
    while (!finished) observer.observe(await readGoal(reader, goalId));
  })();
  const viaSql = (async () => {
    while (!finished) {
      observer.observe(sql.read());
      await tick();
    }
  })();
  try {
    await Promise.all([stop, viaMcp, viaSql]);
    observer.observe(await readGoal(reader, goalId));
    observer.observe(sql.read());
  } finally {
    finished = true; // a failed observation stops the other reader too
    await Promise.allSettled([viaMcp, viaSql]);
    sql.close();
  }
}

/** The goal's log and channel after the race: exactly one alert and one pause, each in the command that crossed its line. */
function checkLog(app: App, goalId: number, channelId: number, budget: number, expectedSpend: number): void {
  const events = readAll(app.engine.db, { limit: 1e9 });
  const costs = events.filter((e) => e.type === 'CostRecorded' && (e.data as { goalId: number }).goalId === goalId);
  const spent = costs.reduce((n, e) => n + (e.data as { cents: number }).cents, 0);
  assert.equal(spent, expectedSpend, 'every reported cent is a CostRecorded event (spend is never refused)');
  const goalEvents = events.filter((e) => e.streamId === `goal-${goalId}`);
  const alerts = goalEvents.filter((e) => e.type === 'BudgetAlertRaised');
  const pauses = goalEvents.filter((e) => e.type === 'GoalPaused');
  assert.equal(alerts.length, 1, `one BudgetAlertRaised, not ${alerts.length}`);
  assert.equal(pauses.length, 1, `one GoalPaused, not ${pauses.length}`);
  for (const [event, line] of [
    [alerts[0]!, budget * 0.8],
    [pauses[0]!, budget],
  ] as const) {
    const before = costs.filter((c) => c.position < event.position);
    const crossing = before.at(-1)!;
    assert.equal(
      crossing.meta.commandId,
      event.meta.commandId,
      `${event.type} is in the command of the cost that crossed ${line}`,
    );
    const total = before.reduce((n, e) => n + (e.data as { cents: number }).cents, 0);
    const previous = total - (crossing.data as { cents: number }).cents;
    assert.ok(previous < line && total >= line, `${event.type}: spend went ${previous} → ${total} over ${line}`);
    assert.equal((event.data as { spent: number }).spent, total, `${event.type} records the spend that crossed`);
  }
  const notices = channelMessages(app.engine.db, channelId, 1e6, null).map((m) => m.metadata?.event);
  assert.equal(notices.filter((e) => e === 'BudgetAlertRaised').length, 1, 'one alert in the goal channel');
  assert.equal(notices.filter((e) => e === 'GoalPaused').length, 1, 'one pause notice in the goal channel');
  const dms = events.filter(
    (e) => e.type === 'MessagePosted' && (e.data as { metadata?: { event?: string } }).metadata?.event === 'GoalPaused',
  );
  assert.equal(dms.length, 1, 'one DM to the owner about the pause');
  assert.equal(dms[0]!.meta.commandId, pauses[0]!.meta.commandId, 'the DM is part of the pausing command');
  const verified = app.engine.verify();
  assert.ok(verified.ok, JSON.stringify(verified));
}

interface Setup {
  f: HttpFixture;
  ownerId: number;
  goalId: number;
  channelId: number;
  taskIds: number[];
}

async function setup(budget: number, leaves: number): Promise<Setup> {
  const f = await httpFixture({ agentTools: ['whoami', 'report_usage', 'get_goal'] });
  const ownerId = getAgent(f.app.engine.db, f.agentId)!.ownerId;
  const owner = await f.connect(f.ownerToken);
  const goal = await ok(owner, 'create_goal', {
    title: 'Budget race',
    description: 'Concurrent spend against one cents budget',
    budget_dollars_cents: budget,
    approval_mode: 'auto',
  });
  const tree = {
    title: 'Spend root',
    description: "The root of the spenders' tasks",
    children: Array.from({ length: leaves }, (_, i) => ({
      title: `Spend ${i + 1}`,
      description: `Leaf ${i + 1} that reports usage`,
    })),
  };
  const proposed = await ok(owner, 'propose_task_tree', { goal_id: goal.goal_id, tree });
  assert.equal(proposed.status, 'approved');
  const taskIds = (proposed.task_ids as number[]).slice(1);
  assert.equal(taskIds.length, leaves);
  return { f, ownerId, goalId: goal.goal_id as number, channelId: goal.channel_id as number, taskIds };
}

function spender(f: HttpFixture, ownerId: number, name: string) {
  return registerAgent(
    f.app,
    {
      name,
      ownerId,
      model: 'test-model',
      systemPrompt: 'You spend money on tasks.',
      toolScope: ['whoami', 'report_usage', 'get_goal', 'claim_task'],
      tier: 'supervised',
      command: null,
      parentId: null,
      spawnDepth: 0,
    },
    { actor: 'user:owner' },
  );
}

/** A spender that has claimed its task: only a task's assignee (or its coordinator, or the owner) reports usage on it. */
function assigned(f: HttpFixture, ownerId: number, name: string, taskId: number) {
  const a = spender(f, ownerId, name);
  claimTask(f.app, { key: `agent-${a.agentId}`, name, tenant: ownerId }, taskId, { actor: `agent:${name}` });
  return a;
}

function tests(): void {
  describe('budget race over HTTP', () => {
    it(
      'crosses 80 % and 100 % once each under concurrent report_usage from 8 sessions; readers never see spend ≥ budget on an active goal',
      { timeout: 90_000 },
      async (t) => {
        const seed = seedFrom('BUDGET_RACE_SEED');
        t.diagnostic(`BUDGET_RACE_SEED=${seed}`);
        const rng = prng(seed);
        const SESSIONS = 8;
        const CALLS = 40; // per session
        const BUDGET = 2000;
        const { f, ownerId, goalId, channelId, taskIds } = await setup(BUDGET, SESSIONS);
        try {
          const clients = await Promise.all(
            Array.from({ length: SESSIONS }, (_, i) =>
              f.connect(assigned(f, ownerId, `spender-${i}`, taskIds[i]!).token),
            ),
          );
          const reader = await f.connect(spender(f, ownerId, 'watcher').token);
          // Each session reports on its own task (only its assignee may), one call after another;
          // the 8 sessions run side by side, so their calls interleave on the server.
          const plans = clients.map((c, i) =>
            Array.from({ length: CALLS }, () => ({
              c,
              taskId: taskIds[i]!,
              cents: rng.int(1, 24),
              tokens: rng.int(0, 500),
            })),
          );
          const total = plans.flat().reduce((n, p) => n + p.cents, 0);
          assert.ok(total > BUDGET * 1.2, `the plan spends ${total}, well over ${BUDGET}`);

          const observer = new Observer(BUDGET);
          const calls = Promise.all(
            plans.map(async (plan) => {
              const statuses: string[] = [];
              for (const p of plan) {
                const { result, body } = await callTool(p.c, 'report_usage', {
                  task_id: p.taskId,
                  tokens: p.tokens,
                  cost_cents: p.cents,
                  note: 'race',
                });
                assert.ok(!result.isError, `report_usage failed: ${textOf(result)}`);
                assert.equal(body.goal_id, goalId);
                statuses.push(body.goal_status as string);
              }
              return statuses;
            }),
          );
          await readAlong(f, reader, goalId, observer, calls);
          const statuses = (await calls).flat();
          t.diagnostic(
            `${statuses.length} reports (${total}¢ of ${BUDGET}¢); observations: get_goal ${observer.count('get_goal')}, sql ${observer.count('sql')}; ` +
              `answered active ${statuses.filter((s) => s === 'active').length}, paused ${statuses.filter((s) => s === 'paused').length}`,
          );
          assert.ok(
            statuses.includes('active') && statuses.includes('paused'),
            'some reports landed before the pause and some after',
          );
          assert.ok(observer.count('get_goal') >= 2 && observer.count('sql') >= 2, 'both readers read along');
          assert.ok(observer.count('sql', (o) => o.status === 'active') > 0, 'the SQL reader saw the goal active');
          assert.equal(observer.seen.at(-1)!.status, 'paused');
          checkLog(f.app, goalId, channelId, BUDGET, total);
        } finally {
          await f.close();
        }
      },
    );
  });

  describe('budget race across processes', () => {
    it(
      '3 processes report usage on one data dir: one alert, one pause, and readers in this process never see spend ≥ budget on an active goal',
      { timeout: 90_000 },
      async (t) => {
        const WRITERS = 3;
        const REPORTS = 100; // per process: 1050¢ each (centsOf)
        const BUDGET = 2000;
        const { f, ownerId, goalId, channelId, taskIds } = await setup(BUDGET, WRITERS);
        let children: Child[] = [];
        try {
          const agents = Array.from({ length: WRITERS }, (_, i) => assigned(f, ownerId, `writer-${i}`, taskIds[i]!));
          const reader = await f.connect(spender(f, ownerId, 'watcher').token);
          children = agents.map((a, i) =>
            spawnScript(SELF, [
              CHILD_MODE,
              f.app.dataDir,
              String(a.agentId),
              String(ownerId),
              a.name,
              String(taskIds[i]),
              String(REPORTS),
            ]),
          );
          await Promise.all(children.map((c) => c.waitForLine('ready')));
          const observer = new Observer(BUDGET);
          for (const c of children) c.proc.stdin!.write('go\n');
          const exits = Promise.all(children.map(async (c) => (await c.exit).code));
          await readAlong(f, reader, goalId, observer, exits);
          (await exits).forEach((code, i) =>
            assert.equal(code, 0, `${agents[i]!.name} failed:\n${children[i]!.stderr()}`),
          );
          const summaries = children.map((c) => JSON.parse(c.lines.at(-1)!) as ChildSummary);
          const total = summaries.reduce((n, s) => n + s.cents, 0);
          t.diagnostic(
            `${WRITERS}×${REPORTS} reports (${total}¢ of ${BUDGET}¢); observations: get_goal ${observer.count('get_goal')}, sql ${observer.count('sql')}, ` +
              `of them over 80 %: ${observer.count('sql', (o) => o.spent * 10 >= BUDGET * 8)}; children saw ${summaries.map((s) => JSON.stringify(s.statuses)).join(' ')}`,
          );
          for (const s of summaries) assert.equal(s.reports, REPORTS);
          assert.equal(
            total,
            WRITERS * Array.from({ length: REPORTS }, (_, i) => centsOf(i)).reduce((a, b) => a + b, 0),
          );
          assert.ok(
            observer.count('sql', (o) => o.status === 'active' && o.spent > 0) > 0,
            'the SQL reader saw spend come in while the goal was active',
          );
          assert.equal(observer.seen.at(-1)!.status, 'paused');
          assert.equal(observer.seen.at(-1)!.spent, total);
          checkLog(f.app, goalId, channelId, BUDGET, total);
        } finally {
          for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
          await Promise.all(children.map((c) => c.exit));
          await f.close();
        }
      },
    );
  });
}

// Last, so that every const above is initialized when the child starts.
if (process.argv[2] === CHILD_MODE) await child(process.argv.slice(3));
else tests();
