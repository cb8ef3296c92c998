import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readAll } from '../../src/engine/store.js';
import { getGoal, goalTotals } from '../../src/projections/goal-queries.js';
import { getRun, listRuns, type RunRow } from '../../src/projections/run-queries.js';
import { ok } from '../helpers/calls.js';
import { runtimeWithOwner, type RuntimeFixture } from '../helpers/runtime.js';

/**
 * Spend enforced during a run (issue 34, Must 1), through real processes: a scripted agent prints its
 * cumulative usage as a CLI does, line after line, and keeps going; the run meter records it as it comes
 * (CostRecorded with the run, at most once a second) and stops the process when a budget is reached —
 * the goal's money, the goal's tokens (usage with no price counts as tokens, never as free) or the
 * agent's tokens for the day — recorded with the limit `budget`, the goal paused with one alert.
 */

/** A shell agent that prints `{"usage":…, "total_cost_usd":…}` every 100 ms, `tokens` and `cents` more each time. */
const spender = (tokens: number, cents: number): string =>
  [
    'cat >/dev/null',
    'i=0',
    'while true; do',
    '  i=$((i+1)); c=$((i*' + String(cents) + '))',
    `  printf '{"type":"result","usage":{"input_tokens":%d,"output_tokens":0},"total_cost_usd":%d.%02d}\\n' $((i*${tokens})) $((c/100)) $((c%100))`,
    '  sleep 0.1',
    'done',
  ].join('\n');

type Body = Record<string, unknown>;
interface Msg {
  body: string;
  metadata?: Record<string, unknown> | null;
}

async function goalChannel(owner: Client, budgets: Body): Promise<{ goalId: number; channel: string }> {
  const g = await ok(owner, 'create_goal', {
    title: 'A goal with a budget',
    description: 'Work that must stop at its budget.',
    approval_mode: 'auto',
    ...budgets,
  });
  const goalId = g.goal_id as number;
  await ok(owner, 'propose_task_tree', {
    goal_id: goalId,
    tree: { title: 'Root task', description: 'The root the runs are charged to.' },
  });
  const slug = ((await ok(owner, 'get_goal', { goal_id: goalId })) as { goal: { slug: string } }).goal.slug;
  return { goalId, channel: `goal-${slug}` };
}

async function ended(f: RuntimeFixture, agentId: number): Promise<RunRow> {
  for (let i = 0; i < 300; i++) {
    await f.reactor.idle();
    const run = listRuns(f.app.engine.db, { agentId, limit: 10 })[0];
    if (run && run.status !== 'queued' && run.status !== 'running') return run;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail('the run did not end within 15 s');
}

const costsOf = (f: RuntimeFixture, runId: number) =>
  readAll(f.app.engine.db)
    .filter((e) => e.type === 'CostRecorded' && (e.data as { runId?: number }).runId === runId)
    .map((e) => e.data as { tokens: number; cents: number; at?: string });

const finishOf = (f: RuntimeFixture, runId: number) =>
  readAll(f.app.engine.db).find((e) => e.type === 'RunFinished' && (e.data as { runId: number }).runId === runId)!
    .data as { status: string; cause?: string; reason?: string; limit?: string | null };

async function ownerMessages(owner: Client): Promise<Msg[]> {
  return (await ok(owner, 'read_inbox', { include_read: true, limit: 200 })).messages as Msg[];
}

describe('spend enforced during a run', () => {
  it("stops a run at its goal's money budget, records what it used as it went, and pauses the goal with one alert", async (t) => {
    const f = await runtimeWithOwner(t);
    const agent = f.addRunner('spender', spender(100, 1));
    const { goalId, channel } = await goalChannel(f.owner, { budget_dollars_cents: 5 });
    await ok(f.owner, 'send_message', { channel, body: '@spender please get going' });
    const run = await ended(f, agent.agentId);

    assert.equal(run.status, 'failed');
    assert.equal(run.limitHit, 'budget');
    const finish = finishOf(f, run.runId);
    assert.equal(finish.cause, 'budget');
    assert.match(
      finish.reason ?? '',
      /^stopped by Colony: goal \d+ is paused at its budget \(budget: cents \d+ of 5\)/,
    );

    // Recorded as it went: more than one record, at most one a second (plus the first at once and the rest at the end).
    const costs = costsOf(f, run.runId);
    assert.ok(costs.length >= 2, `streamed records expected, got ${costs.length}`);
    assert.ok(costs.length <= 2 + Math.ceil(run.durationMs! / 1000), `${costs.length} records in ${run.durationMs} ms`);
    const spent = costs.reduce((s, c) => ({ tokens: s.tokens + c.tokens, cents: s.cents + c.cents }), {
      tokens: 0,
      cents: 0,
    });
    assert.ok(spent.cents >= 5, `the budget was reached: ${spent.cents}`);
    assert.deepEqual(
      { tokens: spent.tokens, cents: spent.cents },
      { tokens: run.tokensIn + run.tokensOut, cents: run.costCents },
      'recorded while it ran plus the rest at its end = its final usage, nothing counted twice',
    );
    assert.equal(getRun(f.app.engine.db, run.runId)!.spentCents, spent.cents);

    const goal = getGoal(f.app.engine.db, goalId)!;
    assert.equal(goal.status, 'paused');
    assert.match(goal.pausedReason ?? '', /^budget: cents \d+ of 5/);
    assert.equal(goalTotals(f.app.engine.db, goalId).spentCents, spent.cents);
    const told = (await ownerMessages(f.owner)).filter(
      (m) => m.body.includes(`#${goalId}`) || m.body.includes('spender'),
    );
    assert.equal(told.length, 1, `one alert, got: ${JSON.stringify(told.map((m) => m.body))}`);
    assert.match(told[0]!.body, /pause/i);

    // The paused goal refuses the next run at its gate, as between runs.
    await ok(f.owner, 'send_message', { channel, body: '@spender once more' });
    await f.reactor.idle();
    const next = listRuns(f.app.engine.db, { agentId: agent.agentId, limit: 1 })[0]!;
    assert.notEqual(next.runId, run.runId);
    assert.equal(next.status, 'refused');
  });

  it('counts usage with no price against the goal’s token budget, stopping its process', async (t) => {
    const f = await runtimeWithOwner(t);
    // `scripted` has no price on the rate card and the agent reports no cost: tokens only.
    const agent = f.addRunner('unpriced', spender(300, 0));
    const { goalId, channel } = await goalChannel(f.owner, { budget_tokens: 1000 });
    await ok(f.owner, 'send_message', { channel, body: '@unpriced go' });
    const run = await ended(f, agent.agentId);

    assert.equal(run.status, 'failed');
    assert.equal(run.limitHit, 'budget');
    assert.ok(run.signal !== null, `stopped by a signal, not its own exit (${run.exitCode})`);
    assert.match(finishOf(f, run.runId).reason ?? '', /is paused at its budget \(budget: tokens \d+ of 1000\)/);
    const spent = costsOf(f, run.runId).reduce((s, c) => s + c.tokens, 0);
    assert.ok(spent >= 1000, `tokens counted: ${spent}`);
    assert.equal(
      costsOf(f, run.runId).reduce((s, c) => s + c.cents, 0),
      0,
    );
    const goal = getGoal(f.app.engine.db, goalId)!;
    assert.equal(goal.status, 'paused');
    assert.equal(goalTotals(f.app.engine.db, goalId).spentTokens, spent);
  });

  it("stops a run outside any goal at the agent's daily token cap, tells the owner, and refuses the next run that day", async (t) => {
    const f = await runtimeWithOwner(t);
    const agent = f.addRunner('daily', spender(200, 0), { dailyTokenBudget: 700 });
    await ok(f.owner, 'send_message', { to: 'daily', body: 'work outside any goal' });
    const run = await ended(f, agent.agentId);

    assert.equal(run.status, 'failed');
    assert.equal(run.goalId, null);
    const finish = finishOf(f, run.runId);
    assert.equal(finish.cause, 'daily_token_budget');
    assert.match(finish.reason ?? '', /used \d+ tokens today \(daily token budget 700\)/);
    assert.ok(run.tokensIn >= 700);
    const told = (await ownerMessages(f.owner)).filter((m) => m.body.includes(`Run #${run.runId}`));
    assert.equal(told.length, 1);

    await ok(f.owner, 'send_message', { to: 'daily', body: 'and again' });
    await f.reactor.idle();
    const next = listRuns(f.app.engine.db, { agentId: agent.agentId, limit: 1 })[0]!;
    assert.equal(next.status, 'refused');
    assert.equal(next.gate, 'daily_token_budget');
  });
});
