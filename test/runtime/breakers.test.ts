import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedClock } from '../../src/clock.js';
import { ok, refusal, refusedWithText } from '../helpers/calls.js';
import { runtimeFixture, runtimeWithOwner } from '../helpers/runtime.js';
import {
  WORKER,
  goal,
  notices,
  openOf,
  refusedAtBreaker,
  resumeFromConsole,
  runsOf,
  thresholds,
  wakeOn,
  world,
} from './breaker-world.js';

/**
 * The loop breakers through real runs: scripted agents (shell commands, and worker.ts calling Colony over
 * MCP) that loop without progress, fail the same call, wake each other past the depth, and a task timer
 * over the wake cap. Each trip pauses the agent on that goal with its evidence, the next run is refused at
 * the `breaker` gate, the owner is told once (a DM, and the goal channel), and Resume in the console lifts it.
 */
const DM = 'dm:owner:system';
const PROBE_REFUSED =
  'Error: agent ticker has 0 active probes and was woken 2 times by probes and task timers in the last hour; its wake cap is 2 an hour, so one more probe could wake it above the cap (the owner raises it with colony agents breakers ticker --max-wakes-per-hour N)';
const owned = (names: string[]) => names.map((n) => (n.startsWith('dm:') ? DM : n.replace(/-[\w-]+$/, '')));

describe('loop breakers', () => {
  it('no_progress: N runs in a row that change nothing pause the agent on the goal; one that talks does not', async (t) => {
    const w = await world(await runtimeWithOwner(t));
    const idler = w.addRunner('idler', 'cat >/dev/null; echo thinking, doing nothing');
    const talker = w.addRunner('talker', `WORKER_DM=owner ${WORKER}`, {}, { toolScope: ['whoami', 'send_message'] });
    thresholds(w, idler.agentId, { maxRunsWithoutProgress: 3 });
    thresholds(w, talker.agentId, { maxRunsWithoutProgress: 3 });
    const g = await goal(w);
    const ran = [];
    for (let i = 0; i < 3; i++) ran.push(await wakeOn(w, idler.agentId, g));
    assert.deepEqual(
      ran.map((r) => r.status),
      ['succeeded', 'succeeded', 'succeeded'],
    );
    const [open] = openOf(w, idler.agentId);
    assert.equal(open?.breaker, 'no_progress');
    assert.equal(open?.goalId, g);
    assert.deepEqual(open?.evidence, { runIds: ran.map((r) => r.runId), threshold: 3 });
    refusedAtBreaker(await wakeOn(w, idler.agentId, g), 'no_progress', 'idler');
    refusedAtBreaker(await wakeOn(w, idler.agentId, g), 'no_progress', 'idler');
    assert.equal((await wakeOn(w, idler.agentId, null)).status, 'succeeded', 'paused on that goal only');
    assert.deepEqual(owned(notices(w, idler.agentId)), [DM, 'goal'], 'told once: its DM and the goal channel');

    for (let i = 0; i < 4; i++) assert.equal((await wakeOn(w, talker.agentId, g)).status, 'succeeded');
    assert.deepEqual(openOf(w, talker.agentId), [], 'a run that posts a message is progress');

    const lifted = await resumeFromConsole(w, 'idler', g);
    assert.deepEqual(lifted.lifted, [{ goal_id: g, breaker: 'no_progress' }]);
    assert.deepEqual(lifted.open, []);
    assert.equal((await wakeOn(w, idler.agentId, g)).status, 'succeeded', 'the count starts again after a lift');
    assert.deepEqual(openOf(w, idler.agentId), []);
  });

  it('repeated_failure: the same call failing the same way M times pauses the agent, with the calls as evidence', async (t) => {
    const w = await world(await runtimeWithOwner(t));
    const call = JSON.stringify({ name: 'claim_task', arguments: { task_id: 999_999 } });
    const a = w.addRunner('stubborn', `WORKER_CALL='${call}' ${WORKER}`, {}, { toolScope: ['whoami', 'claim_task'] });
    thresholds(w, a.agentId, { maxRepeatedFailures: 3, maxRunsWithoutProgress: 0 });
    const g = await goal(w);
    const ran = [];
    for (let i = 0; i < 3; i++) ran.push(await wakeOn(w, a.agentId, g));
    assert.deepEqual(
      ran.map((r) => r.status),
      ['succeeded', 'succeeded', 'succeeded'],
      'the agent survives its refusals',
    );
    const [open] = openOf(w, a.agentId);
    assert.equal(open?.breaker, 'repeated_failure');
    assert.equal(open?.goalId, g, 'the goal of the run it failed in');
    assert.deepEqual(open?.evidence.runIds, [ran[2]!.runId]);
    assert.deepEqual(
      open?.evidence.calls?.map((c) => [c.tool, c.errorCode]),
      [
        ['claim_task', 'ErrTaskNotFound'],
        ['claim_task', 'ErrTaskNotFound'],
        ['claim_task', 'ErrTaskNotFound'],
      ],
    );
    assert.equal(new Set(open?.evidence.calls?.map((c) => c.argsDigest)).size, 1, 'the same arguments');
    assert.match(open?.reason ?? '', /claim_task failed 3 times in a row .*ErrTaskNotFound/);
    refusedAtBreaker(await wakeOn(w, a.agentId, g), 'repeated_failure', 'stubborn');
    assert.deepEqual(owned(notices(w, a.agentId)), [DM, 'goal']);

    await resumeFromConsole(w, 'stubborn', g);
    assert.equal((await wakeOn(w, a.agentId, g)).status, 'succeeded');
    assert.deepEqual(openOf(w, a.agentId), [], 'its streak starts again');
  });

  it('wake_depth: agents waking each other past the max trigger depth pause the one woken too deep', async (t) => {
    const w = await world(await runtimeWithOwner(t));
    const scope = { toolScope: ['whoami', 'send_message'] };
    const ping = w.addRunner('ping', `WORKER_DM=pong ${WORKER}`, { maxTriggerDepth: 3 }, scope);
    const pong = w.addRunner('pong', `WORKER_DM=ping ${WORKER}`, { maxTriggerDepth: 3 }, scope);
    await wakeOn(w, ping.agentId, null);
    const chain = [...runsOf(w, ping.agentId), ...runsOf(w, pong.agentId)].sort((x, y) => x.runId - y.runId);
    assert.deepEqual(
      chain.map((r) => [r.agentId, r.depth, r.status, r.gate]),
      [
        [ping.agentId, 0, 'succeeded', null],
        [pong.agentId, 1, 'succeeded', null],
        [ping.agentId, 2, 'succeeded', null],
        [pong.agentId, 3, 'refused', 'trigger_depth'],
      ],
    );
    const [open] = openOf(w, pong.agentId);
    assert.equal(open?.breaker, 'wake_depth');
    assert.equal(open?.goalId, null);
    assert.deepEqual(open?.evidence, { runIds: chain.map((r) => r.runId), threshold: 3 }, 'the whole chain');
    assert.deepEqual(openOf(w, ping.agentId), []);
    refusedAtBreaker(await wakeOn(w, pong.agentId, null), 'wake_depth', 'pong');
    assert.deepEqual(owned(notices(w, pong.agentId)), [DM], 'work outside goals: its DM alone');
    await resumeFromConsole(w, 'pong', null);
    assert.equal((await wakeOn(w, pong.agentId, null)).depth, 0);
  });

  it('wake_rate: a timer over the cap is refused when made; one over an agent’s own cap trips it, and a probe waits', async (t) => {
    const clock = fixedClock(new Date());
    const w = await world(Object.assign(await runtimeFixture({ clock }), {}) as never);
    t.after(() => w.close());
    Object.assign(w, { owner: await w.connect(w.ownerToken) });
    const ticker = w.addRunner('ticker', 'cat >/dev/null; echo tick', {}, { toolScope: ['whoami', 'claim_task'] });
    const g = await goal(w);
    const tree = (interval: number) => ({
      title: 'Watch the build',
      description: 'Look at the build every so often.',
      heartbeat_config: { source: 'task_timer', interval_sec: interval },
    });
    const { text } = await refusal(w, w.owner, 'propose_task_tree', { goal_id: g, tree: tree(10) }, 'ErrInvalidInput');
    assert.match(
      text,
      /tree\.heartbeat_config\.interval_sec: a task timer every 10s would wake its assignee 360 times an hour, more than the wake cap of 60/,
    );

    thresholds(w, ticker.agentId, { maxWakesPerHour: 2, maxRunsWithoutProgress: 0 });
    const [task] = (await ok(w.owner, 'propose_task_tree', { goal_id: g, tree: tree(60) })).task_ids as number[];
    await ok(await w.connect(ticker.token), 'claim_task', { task_id: task });
    await w.reactor.idle();
    const tick = async (): Promise<void> => {
      clock.advance(61_000);
      await new Promise((r) => setTimeout(r, 250));
      await w.reactor.idle();
    };
    for (let i = 0; i < 4; i++) await tick();
    const runs = runsOf(w, ticker.agentId);
    assert.deepEqual(
      runs.map((r) => [r.source, r.status]),
      [
        ['task_assignment', 'succeeded'],
        ['task_timer', 'succeeded'],
        ['task_timer', 'succeeded'],
        ['task_timer', 'refused'],
      ],
      'the fourth tick finds the timer paused: no run at all',
    );
    refusedAtBreaker(runs[3]!, 'wake_rate', 'ticker');
    const [open] = openOf(w, ticker.agentId);
    assert.deepEqual([open?.breaker, open?.goalId], ['wake_rate', g]);
    assert.deepEqual(open?.evidence, { runIds: [runs[1]!.runId, runs[2]!.runId], threshold: 2 });
    assert.deepEqual(owned(notices(w, ticker.agentId)), [DM, 'goal']);
    const probe = { agent_id: 'ticker', message: 'Look again.', expires_in_hours: 1 };
    await refusedWithText(w, w.owner, 'probe_create', probe, PROBE_REFUSED, 'ErrInvalidInput');

    clock.advance(3_600_000);
    await resumeFromConsole(w, 'ticker', g);
    await tick();
    assert.deepEqual(runsOf(w, ticker.agentId).at(-1)?.status, 'succeeded', 'lifted: the timer wakes it again');
  });
});
