import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { ReplayCache } from '../../src/http/api-replay.js';
import { goalSnapshot } from '../../src/projections/goal-snapshot.js';
import { replayTo } from '../../src/engine/replay.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { busyGoal } from './busy-goal.js';
import { Browser, type Body } from './console-client.js';
import { productProjections } from '../../src/app.js';

/**
 * Time travel in the console: `GET /api/goals/:id/history` (the scrubber's stops) and
 * `GET /api/goals/:id/replay?position=N`, whose cached cursors and checkpoints (http/api-replay.ts) must
 * answer exactly what a fresh `replayTo` (colony replay) does at every position, whichever way the
 * slider moves. The timing on a 10,000-event goal is a benchmark (bench/console.ts, console_scrub_ms).
 */
let f: HttpFixture;
let owner: Browser;
let goalId: number;
let start: number;
let head: number;

/** The goal's snapshot at `position` the way `colony replay` computes it: a fresh in-memory replay. */
function fresh(position: number): unknown {
  const engine = replayTo(f.app.engine.db, position, productProjections);
  try {
    return JSON.parse(JSON.stringify(goalSnapshot(engine.db, goalId)));
  } finally {
    engine.close();
  }
}

before(async () => {
  f = await httpFixture();
  ({ goalId, start } = busyGoal(f.app, { agentId: f.agentId, name: 'worker' }, 700, 6));
  head = f.app.engine.head().position;
  owner = new Browser(f);
  await owner.signIn(f.ownerToken);
});
after(() => f.close());

describe('GET /api/goals/:id/history', () => {
  it("lists every position where the goal's snapshot changes, with its time and type", async () => {
    const h = await owner.json(`/goals/${goalId}/history`);
    assert.equal(h.head, head);
    assert.equal(h.positions[0], start, 'from GoalCreated');
    assert.equal(h.types[0], 'GoalCreated');
    assert.ok(h.positions.length >= 700 && h.positions.at(-1) === head);
    assert.ok(h.positions.every((p: number, i: number) => i === 0 || p > h.positions[i - 1]));
  });
});

describe('GET /api/goals/:id/replay', () => {
  it('equals a fresh replayTo at positions visited forwards, backwards and by jumps', async () => {
    const positions = [head, start, start + 1, Math.floor((start + head) / 2), head - 1, start + 37, head, start + 5];
    for (const p of positions)
      assert.deepEqual(await owner.json(`/goals/${goalId}/replay?position=${p}`), fresh(p), `position ${p}`);
    const latest = await owner.json(`/goals/${goalId}/replay?position=${head}`);
    assert.deepEqual(
      latest,
      JSON.parse(JSON.stringify(goalSnapshot(f.app.engine.db, goalId))),
      'at the head: the live snapshot',
    );
  });

  it("the cache's checkpoints give the same answers as a fresh replay wherever the cursor comes from", () => {
    const cache = new ReplayCache(f.app.engine.db, 50);
    try {
      let seed = 11;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const path = [
        head,
        start + 120,
        start + 99,
        start + 100,
        start + 101,
        head - 260,
        head - 250,
        head - 251,
        start,
        ...Array.from({ length: 6 }, () => start + Math.floor(random() * (head - start))),
      ];
      for (const p of path)
        assert.deepEqual(JSON.parse(JSON.stringify(cache.snapshotAt(goalId, p))), fresh(p), `position ${p}`);
      assert.equal(cache.snapshotAt(goalId, start - 1), null, 'before the goal existed');
    } finally {
      cache.close();
    }
  });

  it('refuses a position before the goal existed (404), past the head or malformed (400)', async () => {
    await owner.error(`/goals/${goalId}/replay?position=${start - 1}`, {}, 404, 'ErrGoalNotFound');
    await owner.error(`/goals/${goalId}/replay?position=0`, {}, 404, 'ErrGoalNotFound');
    await owner.error(`/goals/${goalId}/replay?position=${head + 1}`, {}, 400, 'ErrInvalidInput');
    for (const q of ['', 'position=abc', 'position=-1', 'position=1e3', 'position=5&at=now'])
      await owner.error(`/goals/${goalId}/replay?${q}`, {}, 400, 'ErrInvalidInput');
  });

  it('answers a dragged slider quickly (timing reported as a diagnostic)', async (t) => {
    const { positions } = (await owner.json(`/goals/${goalId}/history`)) as Body;
    const stops: number[] = positions.filter((_: number, i: number) => i % 7 === 0).reverse();
    const times: number[] = [];
    for (const p of stops) {
      const s = performance.now();
      await owner.json(`/goals/${goalId}/replay?position=${p}`);
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    const p95 = times[Math.floor(0.95 * times.length)]!;
    t.diagnostic(
      `replay over HTTP, ${times.length} steps backwards over ${positions.length} events: p50 ${times[times.length >> 1]!.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`,
    );
    assert.ok(p95 < 500, `p95 ${p95} ms`);
  });
});
