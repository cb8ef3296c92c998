import assert from 'node:assert/strict';
import { configureBreakers } from '../../../src/actions/breakers.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readAll } from '../../../src/engine/store.js';
import { getGoal } from '../../../src/projections/goal-queries.js';
import { listRuns } from '../../../src/projections/run-queries.js';
import { colony } from '../../helpers/cli.js';
import { type RuntimeFixture, runtimeWithOwner } from '../../helpers/runtime.js';
import { ok } from '../../helpers/calls.js';

/**
 * Budgets and secrets at the run boundary: a run in a paused goal
 * is refused before its process starts; runs that cross 100 % pause the goal and no later run starts
 * (overshoot bounded by the runs already started); a requested secret reaches the next run — request_resource → `colony secrets set` → the
 * agent's next run sees the variable, 20 times out of 20 — and a revoked secret is absent from the next run.
 */

/** An auto-mode goal (budget in cents) whose tree has `leaves` leaves; the task ids. */
async function goal(
  f: RuntimeFixture & { owner: Client },
  budgetCents: number,
  leaves: number,
): Promise<{ goalId: number; leaves: number[] }> {
  const g = await ok(f.owner, 'create_goal', {
    title: `Budget goal ${budgetCents}`,
    description: 'A goal with a small budget.',
    approval_mode: 'auto',
    budget_dollars_cents: budgetCents,
  });
  const children = Array.from({ length: leaves }, (_, i) => ({
    title: `Leaf ${i + 1}`,
    description: 'A leaf that costs money.',
  }));
  const p = await ok(f.owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: { title: 'Root', description: 'The root of the tree.', children },
  });
  return { goalId: g.goal_id as number, leaves: (p.task_ids as number[]).slice(1) };
}

const cwdOf = (f: RuntimeFixture, name: string) => join(f.app.dataDir, 'workspace', 'agents', name);
/** Records that its process started, then reports a cost of `usd`. */
const spender = (usd: number) =>
  `cat >/dev/null; touch started-$COLONY_RUN_ID; sleep 0.3; echo '{"total_cost_usd":${usd},"usage":{"input_tokens":10,"output_tokens":10}}'`;

describe('budget gate at run start', () => {
  it('a run in a paused goal is refused before the process starts', async (t) => {
    const f = await runtimeWithOwner(t);
    const a = f.addRunner('payer', spender(0.01));
    const { goalId, leaves } = await goal(f, 100, 1);
    const { pauseForBudget } = await import('../../../src/actions/budget.js');
    pauseForBudget(
      f.app,
      getGoal(f.app.engine.db, goalId)!,
      { scope: 'goal', taskId: 0, dimension: 'cents', committed: 100, requested: 1, budget: 100 },
      { key: 'system', name: 'system' },
      { actor: 'system' },
    );
    const out = f.reactor.wake({ agentId: a.agentId, source: 'manual', taskId: leaves[0], by: 'user-1' });
    assert.equal(out.kind, 'refused');
    assert.equal(out.run.gate, 'budget');
    assert.match(out.run.reason!, new RegExp(`goal ${goalId} is paused`));
    await f.reactor.idle();
    assert.equal(existsSync(join(cwdOf(f, 'payer'), `started-${out.run.runId}`)), false, 'no process was started');
  });

  it('runs that cross 100 % pause the goal once; later runs are refused (overshoot bounded by the runs already started)', async (t) => {
    const f = await runtimeWithOwner(t);
    const a = f.addRunner('spender-a', spender(0.08));
    const b = f.addRunner('spender-b', spender(0.08));
    const { goalId, leaves } = await goal(f, 10, 3);
    const ra = f.reactor.wake({ agentId: a.agentId, source: 'manual', taskId: leaves[0], by: 'user-1' });
    const rb = f.reactor.wake({ agentId: b.agentId, source: 'manual', taskId: leaves[1], by: 'user-1' });
    assert.equal(ra.run.status, 'running');
    assert.equal(rb.run.status, 'running');
    await f.reactor.idle();
    const g = getGoal(f.app.engine.db, goalId)!;
    assert.equal(g.status, 'paused');
    const events = readAll(f.app.engine.db, { limit: 100_000 });
    assert.equal(events.filter((e) => e.type === 'GoalPaused').length, 1);
    assert.equal(events.filter((e) => e.type === 'BudgetAlertRaised').length, 1);
    const later = f.reactor.wake({ agentId: a.agentId, source: 'manual', taskId: leaves[2], by: 'user-1' });
    assert.equal(later.run.gate, 'budget');
    await f.reactor.idle();
    const started = listRuns(f.app.engine.db, { goalId, limit: 10 }).filter((r) => r.startedAt !== null);
    assert.equal(started.length, 2, 'only the two runs already started ran');
  });
});

describe('secrets reach the next run', () => {
  it('request_resource → colony secrets set → the next run sees the variable, 20 of 20; revoked → absent', async (t) => {
    const f = await runtimeWithOwner(t);
    const needy = f.addRunner(
      'needy',
      `cat >/dev/null; env | grep '^SC12_' | sort > seen-$COLONY_RUN_ID; true`,
      {},
      { toolScope: ['whoami', 'request_resource', 'claim_task'] },
    );
    // Its 20 runs only read their environment: the no-progress breaker would rightly pause it after 5.
    configureBreakers(f.app, f.ownerId, needy.agentId, { maxRunsWithoutProgress: 0 }, { actor: 'user:owner' });
    const client = await f.connect(needy.token);
    const { leaves } = await goal(f, 0, 1);
    await ok(client, 'claim_task', { task_id: leaves[0] });
    await f.reactor.idle();
    const data = ['--data', f.app.dataDir];
    for (let i = 1; i <= 20; i += 1) {
      const before = listRuns(f.app.engine.db, { agentId: needy.agentId, limit: 1 })[0]?.runId ?? 0;
      await ok(client, 'request_resource', {
        name: `SC12_KEY_${i}`,
        resource_type: 'api_key',
        reason: `needed for round ${i}`,
        task_id: leaves[0],
      });
      const set = colony(['secrets', 'set', `SC12_KEY_${i}`, `value-${i}`, '--scope', 'agent:needy', ...data]);
      assert.equal(set.code, 0, set.stderr);
      await waitFor(() => (listRuns(f.app.engine.db, { agentId: needy.agentId, limit: 1 })[0]?.runId ?? 0) > before);
      await f.reactor.idle();
      const run = listRuns(f.app.engine.db, { agentId: needy.agentId, limit: 1 })[0]!;
      assert.equal(run.source, 'message_received');
      assert.equal(run.status, 'succeeded');
      const seen = readFileSync(join(cwdOf(f, 'needy'), `seen-${run.runId}`), 'utf8');
      assert.match(seen, new RegExp(`^SC12_KEY_${i}=value-${i}$`, 'm'), `round ${i}`);
    }
    const revoke = colony(['secrets', 'revoke', 'SC12_KEY_20', '--scope', 'agent:needy', ...data]);
    assert.equal(revoke.code, 0, revoke.stderr);
    const next = f.reactor.wake({ agentId: needy.agentId, source: 'manual', by: 'user-1' });
    await f.reactor.whenDone(next.run.runId);
    const seen = readFileSync(join(cwdOf(f, 'needy'), `seen-${next.run.runId}`), 'utf8');
    assert.doesNotMatch(seen, /SC12_KEY_20=/);
    assert.match(seen, /^SC12_KEY_19=value-19$/m);
  });
});

async function waitFor(check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}
