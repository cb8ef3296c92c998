import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getTask } from '../../src/projections/task-queries.js';
import { getRun, listRuns, runtimeOf, type RunRow } from '../../src/projections/run-queries.js';
import { sessionMessages } from '../../src/projections/session-message-queries.js';
import { readAll } from '../../src/engine/store.js';
import { fixedClock } from '../../src/clock.js';
import { runtimeFixture, type RuntimeFixture, runtimeWithOwner } from '../helpers/runtime.js';
import { ok } from '../helpers/calls.js';

/**
 * The reactor and the harness end to end: real HTTP MCP,
 * real agent processes (test/fixtures/agents/worker.ts talks back over MCP), every wake source, the
 * gates in order with their recorded refusals, coalescing per (agent, task, goal), timeouts.
 */
// Agents run in their own working directory, so the loader is named by its resolved URL.
const WORKER = `node --import ${import.meta.resolve('tsx')} ${join(process.cwd(), 'test/fixtures/agents/worker.ts')}`;
type Body = Record<string, unknown>;

/** A goal in auto mode coordinated by `coordinator`, with a root and two leaves; returns the task ids. */
async function goalWithTree(
  f: RuntimeFixture & { owner: Client },
  coordinator: string,
  leaf: Body = {},
  goal: Body = {},
): Promise<{ goalId: number; root: number; leaves: number[] }> {
  const g = await ok(f.owner, 'create_goal', {
    title: 'Runtime goal',
    description: 'A goal for runtime tests.',
    coordinator_config: coordinator,
    approval_mode: 'auto',
    ...goal,
  });
  const p = await ok(f.owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: {
      title: 'Root task',
      description: 'The root of the tree.',
      children: [
        {
          title: 'Leaf one',
          description: 'First leaf to work on.',
          acceptance_criteria: 'It is done well.',
          billing_code: 'docs',
          ...leaf,
        },
        { title: 'Leaf two', description: 'Second leaf to work on.' },
      ],
    },
  });
  const ids = p.task_ids as number[];
  return { goalId: g.goal_id as number, root: ids[0]!, leaves: ids.slice(1) };
}

const runsOf = (f: RuntimeFixture, agentId: number): RunRow[] =>
  listRuns(f.app.engine.db, { agentId, limit: 100 }).reverse();
const started = (f: RuntimeFixture, runId: number) =>
  JSON.parse(
    readFileSync(
      join(
        f.app.dataDir,
        'workspace',
        'agents',
        getRun(f.app.engine.db, runId) ? agentName(f, runId) : '',
        `run-${runId}.json`,
      ),
      'utf8',
    ),
  ) as { stdin: string; env: Record<string, string> };
const agentName = (f: RuntimeFixture, runId: number) =>
  (
    f.app.engine.db
      .prepare('SELECT name FROM agents WHERE agent_id = ?')
      .get(getRun(f.app.engine.db, runId)!.agentId) as { name: string }
  ).name;

describe('reactor', () => {
  it('goal_created wakes the coordinator; a claim wakes the assignee with the task context, which moves claimed → in_progress', async (t) => {
    const f = await runtimeWithOwner(t);
    const coord = f.addRunner('coord', 'cat >/dev/null; echo planning');
    const spec = f.addRunner(
      'spec',
      `WORKER_COMPLETE=1 WORKER_REPORT=500,7 ${WORKER}`,
      {},
      { toolScope: ['whoami', 'claim_task', 'complete_task', 'report_usage', 'send_message'] },
    );
    const { goalId, leaves } = await goalWithTree(f, 'coord');
    await f.reactor.idle();
    const coordRuns = runsOf(f, coord.agentId);
    assert.equal(coordRuns[0]?.source, 'goal_created');
    assert.equal(coordRuns[0]?.status, 'succeeded');
    const specClient = await f.connect(spec.token);
    await ok(specClient, 'claim_task', { task_id: leaves[0] });
    await f.reactor.idle();
    const [run] = runsOf(f, spec.agentId);
    assert.equal(run?.source, 'task_assignment');
    assert.equal(run?.status, 'succeeded', run?.outputTail ?? '');
    assert.equal(run?.taskId, leaves[0]);
    const seen = started(f, run!.runId);
    assert.match(seen.stdin, /You are spec, a scripted test agent\./);
    assert.match(seen.stdin, /# Task #\d+: Leaf one/);
    assert.match(seen.stdin, /First leaf to work on\./);
    assert.match(seen.stdin, /It is done well\./);
    assert.match(seen.stdin, /Root task/);
    assert.equal(seen.env.COLONY_TASK_ID, String(leaves[0]));
    assert.equal(seen.env.COLONY_GOAL_ID, String(goalId));
    assert.equal(seen.env.COLONY_AGENT, 'spec');
    assert.equal(seen.env.COLONY_WAKE_SOURCE, 'task_assignment');
    assert.equal(seen.env.COLONY_RUN_ID, String(run!.runId));
    assert.equal(seen.env.COLONY_TOKEN, spec.token);
    assert.match(seen.env.TRACEPARENT!, new RegExp(`^00-${run!.traceId}-[0-9a-f]{16}-01$`));
    assert.ok(JSON.parse(seen.env.COLONY_TASK_ANCESTRY!).some((a: { title: string }) => a.title === 'Root task'));
    const events = readAll(f.app.engine.db, { limit: 100_000 })
      .filter((e) => e.streamId === `task-${leaves[0]}`)
      .map((e) => e.type);
    assert.deepEqual(events.slice(0, 5), [
      'TaskCreated',
      'TaskClaimed',
      'TaskStarted',
      'CostRecorded',
      'TaskCompleted',
    ]);
    const task = getTask(f.app.engine.db, leaves[0]!)!;
    // New goals require evidence: the auto verifier decides no leaf, the hand-in waits for the owner.
    assert.equal(task.status, 'awaiting_verification');
    assert.equal(task.spentTokens, 640); // report_usage during the run (500) + the run's final usage object (100 in + 40 out)
    assert.equal(task.spentCents, 8);
    assert.equal(run!.tokensIn, 100);
    assert.equal(run!.tokensOut, 40);
    assert.equal(run!.costCents, 1);
    assert.equal(run!.reportedTokens, 500);
    assert.equal(run!.reportedCents, 7);
    assert.ok((run!.durationMs ?? 0) > 0);
    const transcript = sessionMessages(f.app.engine.db, run!.runId);
    assert.equal(transcript[0]!.role, 'user');
    assert.equal(transcript.at(-1)!.content, `run ${run!.runId} of spec done`);
    assert.equal(runtimeOf(f.app.engine.db, spec.agentId).status, 'idle');
    // The goal channel holds the system message of the completion; the run shows on the agent (colony runs list --agent).
    const channel = ((await ok(f.owner, 'get_goal', { goal_id: goalId })) as { goal: { channel_id: number } }).goal
      .channel_id;
    const messages = (await ok(f.owner, 'get_channel_messages', { channel_id: channel, limit: 100 })).messages as {
      body: string;
      kind: string;
    }[];
    assert.ok(
      messages.some(
        (m) =>
          m.kind === 'system' &&
          m.body === `Task #${leaves[0]} "Leaf one": in_progress → awaiting_verification by spec`,
      ),
      JSON.stringify(messages.map((m) => m.body)),
    );
    await ok(f.owner, 'verify_task', { task_id: leaves[0], verdict: 'approve', reason: 'read it' });
    const late = f.reactor.wake({ agentId: spec.agentId, source: 'task_timer', taskId: leaves[0], by: 'system' });
    assert.equal(late.run.gate, 'task_closed');
    assert.equal(late.run.reason, `task ${leaves[0]} is done: there is nothing left to run for`);
  });

  it('a DM wakes the recipient; DMs that arrive while it runs merge into one queued run (coalescing)', async (t) => {
    const f = await runtimeWithOwner(t);
    const slow = f.addRunner('slow', 'cat >/dev/null; sleep 0.6; echo ok');
    const first = f.reactor.wake({ agentId: slow.agentId, source: 'manual', by: 'user-1' });
    assert.equal(first.run.status, 'running');
    const dm = async (body: string) => (await ok(f.owner, 'send_message', { to: 'slow', body })).message_id as number;
    const ids = [await dm('one'), await dm('two'), await dm('three')];
    await f.reactor.idle();
    const runs = runsOf(f, slow.agentId);
    assert.equal(runs.length, 2, JSON.stringify(runs.map((r) => [r.source, r.status])));
    assert.equal(runs[1]!.source, 'message_received');
    assert.deepEqual(
      runs[1]!.wakes.flatMap((w) => w.messageIds),
      ids,
    );
    const prompt = sessionMessages(f.app.engine.db, runs[1]!.runId)[0]!.content;
    for (const body of ['one', 'two', 'three']) assert.match(prompt, new RegExp(`\\n${body}(\\n|$)`));
  });

  it('wakes about different goals never merge: two goals created while their coordinator runs get a run each, each prompt naming its goal', async (t) => {
    const f = await runtimeWithOwner(t);
    const coord = f.addRunner('coord', 'cat >/dev/null; sleep 0.6; echo planned');
    const busy = f.reactor.wake({ agentId: coord.agentId, source: 'manual', by: 'user-1' });
    assert.equal(busy.run.status, 'running');
    const goal = async (title: string) =>
      (
        await ok(f.owner, 'create_goal', {
          title,
          description: `${title}: a goal created while its coordinator is busy.`,
          coordinator_config: 'coord',
        })
      ).goal_id as number;
    const goals = [await goal('Ship the docs'), await goal('Fix the build')];
    await f.reactor.idle();
    const woken = runsOf(f, coord.agentId).filter((r) => r.source === 'goal_created');
    assert.deepEqual(
      woken.map((r) => [r.goalId, r.status]),
      goals.map((g) => [g, 'succeeded']),
    );
    for (const [run, title] of [
      [woken[0]!, 'Ship the docs'],
      [woken[1]!, 'Fix the build'],
    ] as const) {
      const prompt = sessionMessages(f.app.engine.db, run.runId)[0]!.content;
      assert.match(prompt, new RegExp(title));
      assert.equal(run.wakes.length, 1, 'one wake, about its own goal');
    }
  });

  it('messages an agent sends during its run join its session and wake the recipient one level deeper, up to the max trigger depth', async (t) => {
    const f = await runtimeWithOwner(t);
    const scope = { toolScope: ['whoami', 'send_message'] };
    const ping = f.addRunner('ping', `WORKER_DM=pong ${WORKER}`, { maxTriggerDepth: 3 }, scope);
    const pong = f.addRunner('pong', `WORKER_DM=ping ${WORKER}`, { maxTriggerDepth: 3 }, scope);
    f.reactor.wake({ agentId: ping.agentId, source: 'manual', by: 'user-1' });
    await f.reactor.idle();
    const all = listRuns(f.app.engine.db, { limit: 10 }).reverse();
    assert.deepEqual(
      all.map((r) => [r.agentId, r.source, r.depth, r.status]),
      [
        [ping.agentId, 'manual', 0, 'succeeded'],
        [pong.agentId, 'message_received', 1, 'succeeded'],
        [ping.agentId, 'message_received', 2, 'succeeded'],
        [pong.agentId, 'message_received', 3, 'refused'],
      ],
    );
    assert.equal(all[3]!.gate, 'trigger_depth');
    const transcript = sessionMessages(f.app.engine.db, all[0]!.runId).map((m) => [m.role, m.content]);
    assert.ok(
      transcript.some(
        ([role, content]) => role === 'agent' && /^\[message #\d+ to dm:[^\]]+\] hello from ping$/.test(content!),
      ),
      JSON.stringify(transcript),
    );
    assert.match(
      sessionMessages(f.app.engine.db, all[1]!.runId)[0]!.content,
      /from ping \(agent\) at .*\nhello from ping/,
    );
  });

  it('task_timer: a claimed task with heartbeat_config.interval_sec wakes its assignee each interval (never two runs of it at once)', async (t) => {
    const clock = fixedClock(new Date());
    const f = Object.assign(await runtimeFixture({ clock }), {});
    t.after(() => f.close());
    const owner = await f.connect(f.ownerToken);
    const ticker = f.addRunner('ticker', 'cat >/dev/null; echo tick', {}, { toolScope: ['whoami', 'claim_task'] });
    const { leaves } = await goalWithTree(Object.assign(f, { owner }), 'default', {
      heartbeat_config: { source: 'task_timer', interval_sec: 60 },
    });
    await ok(await f.connect(ticker.token), 'claim_task', { task_id: leaves[0] });
    await f.reactor.idle();
    assert.deepEqual(
      runsOf(f, ticker.agentId).map((r) => r.source),
      ['task_assignment'],
    );
    clock.advance(59_000);
    await new Promise((r) => setTimeout(r, 200));
    await f.reactor.idle();
    assert.equal(runsOf(f, ticker.agentId).length, 1, 'not before the interval');
    clock.advance(2_000);
    await new Promise((r) => setTimeout(r, 200));
    await f.reactor.idle();
    assert.deepEqual(
      runsOf(f, ticker.agentId).map((r) => [r.source, r.taskId, r.status]),
      [
        ['task_assignment', leaves[0], 'succeeded'],
        ['task_timer', leaves[0], 'succeeded'],
      ],
    );
  });

  it('an @mention in a goal channel wakes the mentioned agent (not the author) in that goal, charged to it', async (t) => {
    const f = await runtimeWithOwner(t);
    const helper = f.addRunner(
      'helper',
      `cat >/dev/null; echo '{"total_cost_usd":0.02,"usage":{"input_tokens":5,"output_tokens":5}}'`,
    );
    const { goalId, root } = await goalWithTree(f, 'default');
    const slug = ((await ok(f.owner, 'get_goal', { goal_id: goalId })) as { goal: { slug: string } }).goal.slug;
    await ok(f.owner, 'send_message', { channel: `goal-${slug}`, body: 'Could @helper take a look, and not @owner?' });
    await f.reactor.idle();
    const [run] = runsOf(f, helper.agentId);
    assert.equal(run?.source, 'message_received');
    assert.equal(run?.goalId, goalId);
    assert.equal(
      getTask(f.app.engine.db, root)!.spentCents,
      2,
      'a goal run without a task is charged to the root task',
    );
  });

  it('gates refuse in order and record why: stopped, quarantine, trigger depth, daily run budget; cooldown queues', async (t) => {
    const f = await runtimeWithOwner(t);
    const a = f.addRunner('gated', 'cat >/dev/null; echo ok', {
      dailyRunBudget: 1,
      maxTriggerDepth: 2,
      cooldownSec: 0,
    });
    assert.equal(
      f.reactor.wake({ agentId: a.agentId, source: 'manual', by: 'user-1', depth: 2 }).run.gate,
      'trigger_depth',
    );
    const ran = f.reactor.wake({ agentId: a.agentId, source: 'manual', by: 'user-1' });
    await f.reactor.whenDone(ran.run.runId);
    const daily = f.reactor.wake({ agentId: a.agentId, source: 'manual', by: 'user-1' });
    assert.equal(daily.run.gate, 'daily_run_budget');
    assert.match(daily.run.reason!, /already ran 1 times today/);
    f.app.engine.db.prepare('SELECT 1').get();
    const { stopAgent } = await import('../../src/actions/runs/agent-controls.js');
    stopAgent(f.app, f.ownerId, a.agentId, 'user-1', 'test', { actor: 'user:owner' });
    assert.equal(f.reactor.wake({ agentId: a.agentId, source: 'manual', by: 'user-1' }).run.gate, 'stopped');
    const refusals = readAll(f.app.engine.db, { limit: 100_000 })
      .filter((e) => e.type === 'RunRefused')
      .map((e) => (e.data as { gate: string }).gate);
    assert.deepEqual(refusals, ['trigger_depth', 'daily_run_budget', 'stopped']);
  });

  it('a run past its timeout gets SIGTERM, then SIGKILL; RunTimedOut then RunFinished timed_out', async (t) => {
    const f = await runtimeWithOwner(t);
    const a = f.addRunner('stubborn', `trap '' TERM; echo started; sleep 30`, { timeoutSec: 1 });
    const out = f.reactor.wake({ agentId: a.agentId, source: 'manual', by: 'user-1' });
    const run = await f.reactor.whenDone(out.run.runId);
    assert.equal(run.status, 'timed_out');
    assert.equal(run.timedOut, true);
    assert.ok(run.durationMs! >= 1000 && run.durationMs! < 10_000, String(run.durationMs));
    assert.match(run.outputTail ?? '', /started/);
    const types = readAll(f.app.engine.db, { limit: 100_000 })
      .filter((e) => e.streamId === `run-${run.runId}`)
      .map((e) => e.type);
    assert.deepEqual(
      types.filter((x) => x.startsWith('Run')),
      ['RunQueued', 'RunStarted', 'RunLaunched', 'RunTimedOut', 'RunFinished'],
    );
    assert.equal(run.sandbox?.mode, 'bwrap', 'it ran confined');
    assert.equal(runtimeOf(f.app.engine.db, a.agentId).status, 'error');
  });
});
