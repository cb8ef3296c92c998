import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createOwner } from '../../src/actions/principals.js';
import { openApp, productProjections, type App } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { replayTo } from '../../src/engine/replay.js';
import { readHead } from '../../src/engine/store.js';
import { forkGoal, type ForkRequest } from '../../src/evidence/fork.js';
import { unseal } from '../../src/masterkey.js';
import { authenticate } from '../../src/mcp/auth.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { goalSnapshot } from '../../src/projections/goal-snapshot.js';
import { eventsOfStreams, goalStreams } from '../../src/projections/goal-streams.js';
import { sealedTokenOf } from '../../src/projections/principal-queries.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { domainTour, type TourIds } from '../helpers/domain-tour.js';

/**
 * The what-if fork (evidence/fork.ts) on a log that holds every event type (the domain tour): at every stop of
 * each goal's time travel the fork's log verifies, starts with its origin and replays to the goal's snapshot
 * as time travel shows it there; credentials and secrets stay behind; wrong inputs and a failure half-way leave
 * nothing behind. The CLI, REST and console: test/cli/fork.test.ts, test/http/api-fork.test.ts, test/web.
 */
let scratch: ReturnType<typeof tempDir>;
let app: App;
let tour: TourIds;
let n = 0;

const request = (goalId: number, position: number, more: Partial<ForkRequest> = {}): ForkRequest => ({
  goalId,
  position,
  target: join(scratch.dir, `fork-${++n}`),
  originDataDir: scratch.dir,
  ownerToken: false,
  ...more,
});

/** The goal's snapshot at `position` as time travel (and colony replay) computes it. */
function timeTravel(goalId: number, position: number): unknown {
  const mem = replayTo(app.engine.db, position, productProjections);
  try {
    return goalSnapshot(mem.db, goalId);
  } finally {
    mem.close();
  }
}

/** The positions the console's scrubber stops at, from GoalCreated on. */
function stops(goalId: number): number[] {
  const all = eventsOfStreams(app.engine.db, goalStreams(app.engine.db, getGoal(app.engine.db, goalId)!));
  return all.slice(all.findIndex((e) => e.type === 'GoalCreated')).map((e) => e.position);
}

before(() => {
  scratch = tempDir('colony-fork-');
  const clock = fixedClock('2026-03-01T09:00:00.000Z', 1000);
  app = openApp({ dataDir: scratch.dir, durability: 'normal', clock });
  tour = domainTour(app, clock);
});
after(() => {
  app.engine.close();
  scratch.cleanup();
});

describe('a fork of a goal at a position', () => {
  it("at every stop of each goal's history: verifies, names its origin first and replays to time travel's snapshot", () => {
    const head = readHead(app.engine.db);
    for (const goalId of [tour.goals.main, tour.goals.side]) {
      for (const position of stops(goalId)) {
        const r = forkGoal(app.engine.db, request(goalId, position));
        const fork = openApp({ dataDir: r.dataDir, durability: 'normal' });
        try {
          assert.deepEqual(fork.engine.verify(), { ok: true, events: r.head.position, head: r.head });
          const first = fork.engine.db.prepare('SELECT * FROM es_events WHERE position = 1').get() as {
            stream_id: string;
            type: string;
            data: string;
          };
          assert.equal(first.type, 'LogForked');
          assert.equal(first.stream_id, 'fork-origin');
          const data = JSON.parse(first.data);
          assert.equal(data.goalId, goalId);
          assert.deepEqual(data.origin.head, head);
          const at = app.engine.db.prepare('SELECT hash FROM es_events WHERE position = ?').pluck().get(position);
          assert.deepEqual(data.origin.at, { position, hash: at });
          assert.deepEqual(goalSnapshot(fork.engine.db, goalId), timeTravel(goalId, position), `${goalId}@${position}`);
        } finally {
          fork.engine.close();
        }
      }
    }
    assert.deepEqual(readHead(app.engine.db), head, 'the origin log is only read');
  });

  it('copies no credential and no secret: new tokens, sealed with the fork key; secrets named, not copied', () => {
    const head = readHead(app.engine.db).position;
    const r = forkGoal(app.engine.db, request(tour.goals.main, head, { ownerToken: true }));
    const fork = openApp({ dataDir: r.dataDir, durability: 'normal' });
    try {
      const db = fork.engine.db;
      const kinds = db.prepare("SELECT DISTINCT substr(stream_id, 1, instr(stream_id, '-') - 1) FROM es_events");
      const streams = new Set(kinds.pluck().all() as string[]);
      for (const k of ['secret', 'oauth', 'probe', 'webapp']) assert.ok(!streams.has(k), `no ${k} streams`);
      assert.ok(!db.prepare("SELECT 1 FROM es_events WHERE data LIKE '%sealed%' AND type = 'SecretSet'").get());
      const sealedAtOrigin = app.engine.db.prepare("SELECT data FROM es_events WHERE type = 'TokenIssued'").pluck();
      for (const d of sealedAtOrigin.all() as string[])
        assert.ok(!db.prepare('SELECT 1 FROM es_events WHERE data = ?').get(d), 'no origin token event');
      assert.deepEqual(
        r.secretsNotCopied.map((s) => `${s.name} ${s.scope.label}`),
        ['NPM_TOKEN user:owner'],
      );
      const forked = JSON.parse(db.prepare('SELECT data FROM es_events WHERE position = 1').pluck().get() as string);
      assert.deepEqual(forked.secretsNotCopied, r.secretsNotCopied);
      for (const agentId of Object.values(tour.agents)) {
        const token = unseal(fork.key, sealedTokenOf(db, agentId)!);
        assert.equal(authenticate(fork, token)?.kind, 'agent', `agent ${agentId} has a token of the fork`);
      }
      assert.equal(authenticate(fork, r.ownerToken!)?.kind, 'owner');
    } finally {
      fork.engine.close();
    }
  });
});

describe('wrong inputs write nothing', () => {
  const refused = (req: ForkRequest, pattern: RegExp) => {
    const head = readHead(app.engine.db);
    assert.throws(() => forkGoal(app.engine.db, req), pattern);
    assert.deepEqual(readHead(app.engine.db), head);
  };

  it("an unknown goal, another owner's goal, a position < 1, past the log, or before the goal", () => {
    const other = createOwner(app, 'other-owner', { actor: 'system' }).userId;
    const head = readHead(app.engine.db).position;
    const gone = request(tour.goals.main, 1);
    refused({ ...gone, goalId: 999 }, /goal 999 not found/);
    refused({ ...gone, position: head, tenant: other }, /goal 1 not found/);
    refused({ ...gone, position: 0 }, /position must be a positive integer/);
    refused({ ...gone, position: head + 50 }, new RegExp(`beyond goal 1's history: the log ends at position ${head}`));
    refused({ ...request(tour.goals.side, 3) }, /goal 2 did not exist yet at position 3/);
    assert.ok(!existsSync(gone.target));
  });

  it('a target that holds anything is refused untouched; an empty one is used', () => {
    const target = join(scratch.dir, 'busy');
    mkdirSync(target);
    writeFileSync(join(target, 'notes.txt'), 'mine');
    refused(request(tour.goals.main, 60, { target }), /already exists and is not an empty directory/);
    assert.deepEqual(readdirSync(target), ['notes.txt']);
    const empty = join(scratch.dir, 'empty');
    mkdirSync(empty);
    assert.equal(forkGoal(app.engine.db, request(tour.goals.main, 60, { target: empty })).dataDir, empty);
  });

  it('a failure half-way removes what was written (a made dir whole; an empty one is emptied again)', () => {
    // The clock is read once the fork's database exists (its origin event's time): failing there leaves files.
    const failing = (): Date => {
      throw new Error('the clock broke');
    };
    const made = request(tour.goals.main, 60, { clock: failing });
    assert.throws(() => forkGoal(app.engine.db, made), /the clock broke/);
    assert.ok(!existsSync(made.target), 'the made dir is gone');
    const empty = join(scratch.dir, 'empty-again');
    mkdirSync(empty);
    assert.throws(() => forkGoal(app.engine.db, { ...made, target: empty }), /the clock broke/);
    assert.deepEqual(readdirSync(empty), []);
  });
});
