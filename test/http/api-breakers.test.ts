import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { tripBreaker } from '../../src/actions/breakers.js';
import { createOwner } from '../../src/actions/principals.js';
import { ok } from '../helpers/calls.js';
import { runnableAgent } from '../helpers/finished-runs.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { Browser, OWNER, type Body } from './console-client.js';

/**
 * The loop breakers over real sockets: GET/POST /api/agents/:name/breakers (the thresholds in effect and
 * the agent's own, checked, 0 = off, null = default), POST /api/agents/:name/resume (one goal's or all),
 * and the open breakers in GET /api/attention — the owner's alone to change, another tenant's not found,
 * the reason and evidence hidden from a session that may not read the agent's runs.
 */
let f: HttpFixture;
let owner: Browser;
let goalId = 0;
let looper = 0;
const REASON = '5 runs in a row on goal #1 ended without a claim, hand-in, message, proposal or verdict';

before(async () => {
  f = await httpFixture({ agentTools: ['create_goal'] });
  owner = new Browser(f);
  assert.equal((await owner.signIn(f.ownerToken)).status, 200);
  const g = await ok(await f.connect(f.agentToken), 'create_goal', {
    title: 'Loop <b>here</b>',
    description: 'A goal an agent loops on, for the breakers.',
    coordinator_config: 'worker',
  });
  goalId = g.goal_id as number;
  looper = runnableAgent(f.app, 'looper');
});
after(() => f.close());

const trip = (goal: number | null, runIds: number[]) =>
  tripBreaker(f.app, {
    agentId: looper,
    goalId: goal,
    breaker: 'no_progress',
    reason: REASON,
    evidence: { runIds, threshold: 5 },
  });

describe('REST: loop breakers', () => {
  it('shows and sets the thresholds; bad input and other callers change nothing', async () => {
    const base = { agent: 'looper', breakers: [] };
    const defaults = { ...base, max_runs_without_progress: 5, max_repeated_failures: 5, max_wakes_per_hour: 60 };
    assert.deepEqual(await owner.json('/agents/looper/breakers'), defaults);
    const set = { max_runs_without_progress: 0, max_wakes_per_hour: 12 };
    assert.deepEqual(await owner.json('/agents/looper/breakers', { method: 'POST', body: set }), {
      ...defaults,
      ...set,
    });
    const reset = { max_runs_without_progress: null };
    assert.equal(
      (await owner.json('/agents/looper/breakers', { method: 'POST', body: reset })).max_runs_without_progress,
      5,
    );
    for (const body of [
      { max_repeated_failures: -1 },
      { max_wakes_per_hour: 1.5 },
      { max_wakes_per_hour: '3' },
      { nope: 1 },
    ])
      await owner.error('/agents/looper/breakers', { method: 'POST', body }, 400, 'ErrInvalidInput');
    await owner.error('/agents/nobody/breakers', { method: 'POST', body: {} }, 404, 'ErrNotFound');
    const session = new Browser(f);
    await session.signIn(f.agentToken);
    await session.error(
      '/agents/looper/breakers',
      { method: 'POST', body: { max_wakes_per_hour: 0 } },
      403,
      'ErrForbidden',
    );
    await session.error('/agents/looper/resume', { method: 'POST', body: {} }, 403, 'ErrForbidden');
    const stranger = new Browser(f);
    await stranger.signIn(createOwner(f.app, 'stranger', OWNER).token);
    await stranger.error('/agents/looper/resume', { method: 'POST', body: {} }, 404, 'ErrNotFound');
  });

  it('lists open breakers in the attention list until the owner resumes the agent there', async () => {
    trip(goalId, [3, 4, 5, 6, 7]);
    trip(null, [8]);
    assert.equal(trip(goalId, [9]), false, 'an open breaker trips once');
    let a = await owner.json('/attention');
    assert.deepEqual([a.counts.breakers, a.counts.total], [2, 2]);
    const listed = a.breakers.find((b: Body) => b.goal_id === goalId);
    assert.deepEqual(listed, {
      agent: 'looper',
      agent_id: looper,
      goal_id: goalId,
      goal_title: 'Loop <b>here</b>',
      breaker: 'no_progress',
      reason: REASON,
      evidence: { run_ids: [3, 4, 5, 6, 7], calls: [], task_ids: [], threshold: 5 },
      tripped_at: listed.tripped_at,
      lift: `colony agents resume looper --goal ${goalId}`,
    });
    const session = new Browser(f);
    await session.signIn(f.agentToken);
    assert.deepEqual(
      (await session.json('/attention')).breakers.map((b: Body) => [b.agent, b.reason, b.evidence]),
      [
        ['looper', null, null],
        ['looper', null, null],
      ],
      "the worker's session may not read looper's runs",
    );
    assert.equal((await owner.json('/agents/looper')).agent.runtime.breakers.length, 2);

    await owner.error('/agents/looper/resume', { method: 'POST', body: { goal_id: 'x' } }, 400, 'ErrInvalidInput');
    const one = await owner.json('/agents/looper/resume', { method: 'POST', body: { goal_id: goalId } });
    assert.deepEqual(one.lifted, [{ goal_id: goalId, breaker: 'no_progress' }]);
    assert.deepEqual(
      one.open.map((b: Body) => b.goal_id),
      [null],
    );
    const rest = await owner.json('/agents/looper/resume', { method: 'POST', body: {} });
    assert.deepEqual([rest.lifted, rest.open], [[{ goal_id: null, breaker: 'no_progress' }], []]);
    assert.deepEqual((await owner.json('/agents/looper/resume', { method: 'POST', body: {} })).lifted, []);
    a = await owner.json('/attention');
    assert.deepEqual([a.counts.breakers, a.breakers], [0, []]);
  });
});
