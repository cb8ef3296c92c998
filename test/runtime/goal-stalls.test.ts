import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { registerAgent } from '../../src/actions/principals.js';
import { stopAgent } from '../../src/actions/runs/agent-controls.js';
import { fixedClock } from '../../src/clock.js';
import { listRuns, type RunRow } from '../../src/projections/run-queries.js';
import { sessionMessages } from '../../src/projections/session-message-queries.js';
import { StallWatch } from '../../src/runtime/goal-stalls.js';
import { ok } from '../helpers/calls.js';
import { runtimeFixture } from '../helpers/runtime.js';

/**
 * Issue 32, item 3: a goal that waits on nobody never waits in silence. Through the real reactor, real
 * agent processes and create_goal over MCP, on a hand-advanced clock (the stall is 120 s here, as by
 * default): a draft goal with nothing proposed re-wakes its coordinator once, then its owner gets one DM;
 * a goal with a pending proposal is left alone; an outside coordinator's goal reaches the owner directly;
 * a restarted Colony repeats nothing.
 */
const STALL_MS = 120_000;

async function stallWorld(t: TestContext) {
  const clock = fixedClock(new Date('2026-12-05T09:00:00.000Z'));
  const f = await runtimeFixture({ clock, stallMs: STALL_MS });
  t.after(() => f.close());
  const owner = await f.connect(f.ownerToken);
  const db = f.app.engine.db;
  /** Lets the clock pass `ms`, then lets the reactor sweep (its poll is 50 ms) and finish what it started. */
  const pass = async (ms: number) => {
    clock.advance(ms);
    await new Promise((r) => setTimeout(r, 150));
    await f.reactor.idle();
  };
  const goal = async (title: string, coordinator: string) =>
    (
      await ok(owner, 'create_goal', {
        title,
        description: `${title}: a goal for the stall tests.`,
        coordinator_config: coordinator,
      })
    ).goal_id as number;
  const runsOfGoal = (goalId: number): RunRow[] =>
    listRuns(db, { limit: 100 })
      .filter((r) => r.goalId === goalId)
      .reverse();
  const stallDms = (goalId: number) =>
    db
      .prepare(
        `SELECT m.body, c.name FROM messages m JOIN channels c ON c.channel_id = m.channel_id
          WHERE m.from_key = 'system' AND json_extract(m.metadata, '$.event') = 'GoalStalled'
          AND json_extract(m.metadata, '$.goal_id') = ?`,
      )
      .all(goalId) as { body: string; name: string }[];
  return { f, owner, clock, pass, goal, runsOfGoal, stallDms };
}

describe('a draft goal that stalls', () => {
  it('re-wakes its coordinator once after the stall, then tells the owner once, and never again', async (t) => {
    const w = await stallWorld(t);
    w.f.addRunner('idler', 'cat >/dev/null; echo thinking, proposing nothing');
    const goalId = await w.goal('Write the guide', 'idler');
    await w.f.reactor.idle();
    assert.deepEqual(
      w.runsOfGoal(goalId).map((r) => [r.source, r.status]),
      [['goal_created', 'succeeded']],
    );

    await w.pass(STALL_MS - 10_000);
    assert.equal(w.runsOfGoal(goalId).length, 1, 'nothing before the stall');

    await w.pass(20_000);
    const runs = w.runsOfGoal(goalId);
    assert.deepEqual(
      runs.map((r) => [r.source, r.status]),
      [
        ['goal_created', 'succeeded'],
        ['goal_stalled', 'succeeded'],
      ],
    );
    const prompt = sessionMessages(w.f.app.engine.db, runs[1]!.runId)[0]!.content;
    assert.match(prompt, /# Goal #\d+: Write the guide \(draft\)/);
    assert.match(
      prompt,
      /has been in draft for \d+ min and no task tree was proposed for it\. Propose its task tree now/,
    );
    assert.deepEqual(w.stallDms(goalId), [], 'the owner is not told while the re-wake may still help');

    await w.pass(STALL_MS + 10_000);
    const dms = w.stallDms(goalId);
    assert.equal(dms.length, 1);
    assert.equal(dms[0]!.name, 'dm:system:user-1');
    assert.match(
      dms[0]!.body,
      new RegExp(
        `^Goal #${goalId} "Write the guide" is waiting in draft with no task tree: its coordinator idler was woken again \\(run #${runs[1]!.runId}, succeeded\\) and still proposed no task tree\\.`,
      ),
    );

    await w.pass(3 * STALL_MS);
    assert.equal(w.runsOfGoal(goalId).length, 2, 'no third run');
    assert.equal(w.stallDms(goalId).length, 1, 'no second DM');
    // A restarted Colony reads both back from the log: nothing is due.
    const woken: unknown[] = [];
    new StallWatch(w.f.app, STALL_MS).sweep(w.clock().getTime(), (wake) => woken.push(wake));
    assert.deepEqual(woken, []);
    assert.equal(w.stallDms(goalId).length, 1);
  });

  it('leaves a goal with a pending proposal alone, and tells the owner at once when the re-wake is refused', async (t) => {
    const w = await stallWorld(t);
    w.f.addRunner('planner', 'cat >/dev/null; echo ok');
    const proposed = await w.goal('Proposed already', 'planner');
    await ok(w.owner, 'propose_task_tree', {
      goal_id: proposed,
      tree: { title: 'Root', description: 'The whole of it.', children: [] },
    });
    const stopped = w.f.addRunner('sleeper', 'cat >/dev/null; echo ok');
    const refusedGoal = await w.goal('Coordinator stopped', 'sleeper');
    await w.f.reactor.idle();
    // The owner stops it (`colony agents stop`): the re-wake is refused at the gate, so the owner hears at once.
    stopAgent(w.f.app, w.f.ownerId, stopped.agentId, 'user-1', 'on holiday', { actor: 'user:owner' });
    await w.pass(STALL_MS + 10_000);
    await w.pass(6_000);
    assert.deepEqual(
      w.runsOfGoal(proposed).map((r) => r.source),
      ['goal_created'],
      'a pending proposal waits on the owner, not the coordinator',
    );
    assert.deepEqual(w.stallDms(proposed), []);
    assert.deepEqual(
      w.runsOfGoal(refusedGoal).map((r) => [r.source, r.status]),
      [
        ['goal_created', 'succeeded'],
        ['goal_stalled', 'refused'],
      ],
    );
    const dms = w.stallDms(refusedGoal);
    assert.equal(dms.length, 1);
    assert.match(dms[0]!.body, /its coordinator sleeper could not be woken again: /);
  });

  it("an outside coordinator's goal (no agent command) reaches the owner after the stall, with no run", async (t) => {
    const w = await stallWorld(t);
    registerAgent(
      w.f.app,
      {
        name: 'outsider',
        ownerId: w.f.ownerId,
        model: 'outside',
        systemPrompt: 'Driven by an MCP client Colony does not start.',
        toolScope: ['whoami', 'propose_task_tree'],
        tier: 'supervised',
        command: null,
        parentId: null,
        spawnDepth: 0,
      },
      { actor: 'user:owner' },
    );
    const goalId = await w.goal('Waits outside', 'outsider');
    await w.pass(STALL_MS - 10_000);
    assert.deepEqual(w.stallDms(goalId), []);
    await w.pass(20_000);
    assert.deepEqual(
      w.runsOfGoal(goalId).filter((r) => r.source === 'goal_stalled'),
      [],
    );
    const dms = w.stallDms(goalId);
    assert.equal(dms.length, 1);
    assert.match(dms[0]!.body, /Colony does not run its coordinator outsider \(no agent command/);
  });
});
