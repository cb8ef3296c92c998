import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database } from 'better-sqlite3';
import { createGoal } from '../../src/actions/goals.js';
import { openApp } from '../../src/app.js';
import { openDatabase } from '../../src/engine/db.js';
import { readChainAnchor } from '../../src/engine/last-verify.js';
import { colony, colonyLive } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `colony serve` and `colony stdio` check the chain on start, through the real CLI on real data dirs:
 * each kind of tampering (cut tail, one-byte edit, deleted middle row, swapped rows — triggers dropped
 * first, as an attacker with file access would) refuses the start with one line naming the position and
 * reason; --accept-broken-chain starts, records ChainBreakAccepted, rebuilds the read tables from the
 * log as it is, and new writes work. One template data dir (init + six goals) is copied per case.
 */
const scratch = tempDir('colony-chain-start-');
after(() => scratch.cleanup());

const GOALS = 6;
const by = { key: 'user-1', name: 'owner', tenant: 1 };
const newGoal = (title: string) => ({
  title,
  description: 'A goal whose events the chain check protects.',
  budgets: { tokens: null, cents: null },
  maxSpawnDepth: 3,
  coordinatorConfig: 'default',
  approvalMode: 'human' as const,
});

let template = '';
before(() => {
  template = join(scratch.dir, 'template');
  assert.equal(colony(['init', '--data', template]).code, 0);
  writeGoals(
    template,
    Array.from({ length: GOALS }, (_, i) => `Goal ${i}`),
  );
});

function writeGoals(dir: string, titles: readonly string[]): void {
  const app = openApp({ dataDir: dir });
  try {
    for (const title of titles) createGoal(app, by, newGoal(title), { actor: 'user:owner' });
  } finally {
    app.engine.close();
  }
}

/** A copy of the template, changed by `tamper` with the append-only triggers dropped. */
function tampered(name: string, tamper: (db: Database) => void): string {
  const dir = join(scratch.dir, name);
  cpSync(template, dir, { recursive: true });
  withDb(dir, (db) => {
    db.exec('DROP TRIGGER es_events_no_update; DROP TRIGGER es_events_no_delete;');
    tamper(db);
  });
  return dir;
}

function withDb<T>(dir: string, fn: (db: Database) => T): T {
  const db = openDatabase(join(dir, 'colony.db'));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const goalCreatedAt = (db: Database, title: string): number =>
  db
    .prepare(`SELECT position FROM es_events WHERE type = 'GoalCreated' AND json_extract(data, '$.title') = ?`)
    .pluck()
    .get(title) as number;
const titles = (dir: string): string[] =>
  withDb(dir, (db) => db.prepare('SELECT title FROM goals ORDER BY goal_id').pluck().all() as string[]);
const head = (dir: string) =>
  withDb(
    dir,
    (db) =>
      db.prepare('SELECT position, hash, type FROM es_events ORDER BY position DESC LIMIT 1').get() as {
        position: number;
        hash: string;
        type: string;
      },
  );

/** `colony serve` and `colony stdio` (when asked) refuse with one stderr line naming the position and reason. */
function refuses(dir: string, position: number, reason: string, commands: readonly string[] = ['serve']): void {
  for (const command of commands) {
    const r = colony([command, '--data', dir, ...(command === 'serve' ? ['--port', '0'] : [])]);
    assert.equal(r.code, 1, `${command} must refuse: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
    assert.match(
      r.stderr,
      new RegExp(`^colony: ErrChainBroken: .*broken at position ${position}: ${reason} \\(.*--accept-broken-chain`),
      command,
    );
  }
}

/** Starts serve (with the override when asked), waits until it answers, stops it; returns its stderr line that matters. */
async function serves(dir: string, accept: boolean): Promise<string> {
  const live = colonyLive(['serve', '--data', dir, '--port', '0', ...(accept ? ['--accept-broken-chain'] : [])]);
  try {
    const listening = await live.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 'stderr');
    // An answer means the start-up code (and its signal handlers) has run: a SIGTERM before that would kill it outright.
    assert.equal((await fetch(`${listening.match(/http:\/\/127\.0\.0\.1:\d+/)![0]}/health`)).status, 200);
    return accept ? await live.waitFor(/accepted the broken chain/, 'stderr') : listening;
  } finally {
    assert.equal(await live.stop(), 0);
  }
}

/** The override: starts, records the acceptance at the end of the log, anchors there, and writes go on. */
async function accepts(dir: string, position: number, reason: string): Promise<number> {
  const before = head(dir).position;
  const line = await serves(dir, true);
  assert.match(
    line,
    new RegExp(`at position ${position} \\(${reason}: .*recorded as ChainBreakAccepted at position ${before + 1}`),
  );
  assert.deepEqual([head(dir).position, head(dir).type], [before + 1, 'ChainBreakAccepted']);
  assert.equal((readChainAnchor(dir) as { position: number }).position, before + 1);
  writeGoals(dir, ['Written after the acceptance']);
  assert.equal(titles(dir).at(-1), 'Written after the acceptance');
  return before + 1;
}

describe('colony serve and stdio check the chain on start', () => {
  it('start on a clean log and anchor its head', async () => {
    const dir = tampered('clean', () => {});
    await serves(dir, false);
    assert.deepEqual(
      (({ position, hash }) => ({ position, hash }))(readChainAnchor(dir) as { position: number; hash: string }),
      (({ position, hash }) => ({ position, hash }))(head(dir)),
    );
  });

  it('refuse a cut tail; the override drops its goals from the read tables, and an audit keeps reporting it', async () => {
    let cut = 0;
    const dir = tampered('cut-tail', (db) => {
      cut = goalCreatedAt(db, `Goal ${GOALS - 1}`) - 1; // the last goal's channel, then the goal
      db.prepare('DELETE FROM es_events WHERE position >= ?').run(cut);
    });
    assert.ok(titles(dir).includes(`Goal ${GOALS - 1}`), 'the read tables still hold the cut goal');
    refuses(dir, cut, 'head_mismatch', ['serve', 'stdio']);
    const acceptedAt = await accepts(dir, cut, 'head_mismatch');
    assert.equal(acceptedAt, cut, 'the acceptance continues the real tail');
    assert.ok(!titles(dir).includes(`Goal ${GOALS - 1}`), 'the read tables match the log');

    await serves(dir, false); // a later start checks from the new anchor
    assert.equal((readChainAnchor(dir) as { position: number }).position, head(dir).position);
    const audit = colony(['verify', '--data', dir]);
    assert.equal(audit.code, 1);
    assert.match(
      audit.stderr,
      new RegExp(`verify failed at position ${cut}: accepted_break .*ChainBreakAccepted at position ${cut}`),
    );
  });

  it('refuse a one-byte edit; the override rebuilds the read tables from the edited log', async () => {
    let position = 0;
    const dir = tampered('edit', (db) => {
      position = goalCreatedAt(db, 'Goal 2');
      db.prepare(
        `UPDATE es_events SET data = replace(data, '"title":"Goal 2"', '"title":"Goal X"') WHERE position = ?`,
      ).run(position);
    });
    refuses(dir, position, 'hash_mismatch', ['stdio']);
    await accepts(dir, position, 'hash_mismatch');
    assert.deepEqual(titles(dir).slice(0, GOALS), ['Goal 0', 'Goal 1', 'Goal X', 'Goal 3', 'Goal 4', 'Goal 5']);
  });

  it('refuse a deleted middle row; the override drops its goal', async () => {
    let position = 0;
    const dir = tampered('deleted-row', (db) => {
      position = goalCreatedAt(db, 'Goal 1');
      db.prepare('DELETE FROM es_events WHERE position = ?').run(position);
    });
    refuses(dir, position, 'position_gap');
    await accepts(dir, position, 'position_gap');
    assert.ok(!titles(dir).includes('Goal 1'));
  });

  it('refuse swapped rows at the lower position; the override starts', async () => {
    let lower = 0;
    const dir = tampered('swapped', (db) => {
      const [a, b] = [goalCreatedAt(db, 'Goal 3'), goalCreatedAt(db, 'Goal 4')];
      lower = a;
      // Every column but the position, via a free stream id for the UNIQUE (stream_id, version) constraint.
      const row = (p: number) =>
        db.prepare('SELECT * FROM es_events WHERE position = ?').get(p) as Record<string, unknown>;
      const [ra, rb] = [row(a), row(b)];
      const put =
        db.prepare(`UPDATE es_events SET stream_id = @stream_id, version = @version, type = @type, schema_version = @schema_version,
        data = @data, meta = @meta, recorded_at = @recorded_at, prev_hash = @prev_hash, hash = @hash WHERE position = @at`);
      put.run({ ...ra, stream_id: 'swap-tmp', at: a });
      put.run({ ...ra, at: b });
      put.run({ ...rb, at: a });
    });
    refuses(dir, lower, 'broken_link');
    await accepts(dir, lower, 'broken_link');
  });
});
