import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openApp } from '../../src/app.js';
import { goalSnapshot } from '../../src/projections/goal-snapshot.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { busyGoal } from './busy-goal.js';
import { Browser } from './console-client.js';

/**
 * "Fork from here" over real sockets: `POST /api/goals/:id/fork {position}` writes the fork under
 * `<data>/forks/`, answers with the commands that start Colony on it, and the fork holds the goal exactly as
 * the console's time travel (`GET /api/goals/:id/replay`) showed it there. The owner's alone; a wrong input is
 * a JSON error and writes nothing — no fork dir, no event.
 */
let f: HttpFixture;
let owner: Browser;
let goalId: number;
let start: number;

const forks = () => (existsSync(join(f.app.dataDir, 'forks')) ? readdirSync(join(f.app.dataDir, 'forks')) : []);

before(async () => {
  f = await httpFixture();
  ({ goalId, start } = busyGoal(f.app, { agentId: f.agentId, name: 'worker' }, 120, 4));
  owner = new Browser(f);
  await owner.signIn(f.ownerToken);
});
after(() => f.close());

describe('POST /api/goals/:id/fork', () => {
  it('writes the fork under the data dir and it holds what time travel shows at that position', async () => {
    const head = f.eventCount();
    const position = Math.floor((start + head) / 2);
    const shown = await owner.json(`/goals/${goalId}/replay?position=${position}`);
    const r = await owner.json(`/goals/${goalId}/fork`, { method: 'POST', body: { position } }, 201);
    assert.equal(f.eventCount(), head, 'the origin log is only read');
    assert.match(
      r.data_dir,
      new RegExp(`^${join(f.app.dataDir, 'forks')}/goal-${goalId}-at-${position}-\\d{8}T\\d{9}Z$`),
    );
    assert.deepEqual(r.origin.at.position, position);
    assert.equal(r.origin.head.position, head);
    assert.equal(r.owner_token, null, 'no token in a page');
    assert.deepEqual(r.commands, [
      `colony token create --data ${r.data_dir}`,
      `colony serve --data ${r.data_dir} --port 7071`,
    ]);
    const fork = openApp({ dataDir: r.data_dir, durability: 'normal' });
    try {
      assert.equal(fork.engine.verify().ok, true);
      assert.deepEqual(JSON.parse(JSON.stringify(goalSnapshot(fork.engine.db, goalId))), shown);
    } finally {
      fork.engine.close();
    }
  });

  it("is the owner's: an agent's console session is refused before anything is written", async () => {
    const agent = new Browser(f);
    assert.equal((await agent.signIn(f.agentToken)).status, 200);
    const before = forks();
    await agent.error(`/goals/${goalId}/fork`, { method: 'POST', body: { position: start } }, 403, 'ErrForbidden');
    assert.deepEqual(forks(), before);
  });

  it('refuses a wrong goal or position with a clear error and writes nothing', async () => {
    const head = f.eventCount();
    const before = forks();
    const cases: [string, unknown, number, string, RegExp][] = [
      [`/goals/999/fork`, { position: start }, 404, 'ErrGoalNotFound', /goal 999/],
      [`/goals/${goalId}/fork`, { position: 0 }, 400, 'ErrInvalidInput', /body\.position/],
      [`/goals/${goalId}/fork`, { position: head + 1 }, 400, 'ErrInvalidInput', /beyond goal \d+'s history/],
      [`/goals/${goalId}/fork`, { position: 1 }, 400, 'ErrInvalidInput', /did not exist yet at position 1/],
      [`/goals/${goalId}/fork`, { position: start, into: '/tmp' }, 400, 'ErrInvalidInput', /body/],
      [`/goals/${goalId}/fork`, {}, 400, 'ErrInvalidInput', /body\.position/],
    ];
    for (const [path, body, status, code, message] of cases) {
      const e = await owner.error(path, { method: 'POST', body }, status, code);
      assert.match(e.error.message, message);
    }
    assert.deepEqual(forks(), before);
  });
});
