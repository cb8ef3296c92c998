import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { SNAPSHOT_EVERY } from '../../src/engine/snapshots.js';
import { foldedEvents, loadState } from '../../src/engine/state.js';
import { Engine } from '../../src/engine/engine.js';
import { cardDecider, cardStream } from '../../testkit/cards.js';
import { openCard, TEST_PROJECTIONS } from '../helpers/engine.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Stream snapshots (src/engine/snapshots.ts): a cold load of a long stream — a new connection has an
 * empty state cache, as a restarted server does — folds only the events after the stream's snapshot, and
 * a snapshot is used only while it matches the log, its decider version and its format.
 */
const snapshotted = { ...cardDecider, snapshot: { name: 'card', version: 1 } };
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function longCard(comments: number) {
  const { dir, cleanup } = tempDir();
  const file = join(dir, 'colony.db');
  const writer = Engine.open({ file, projections: TEST_PROJECTIONS, durability: 'normal' });
  cleanups.push(cleanup, () => writer.close());
  const id = openCard(writer, 'long');
  for (let i = 0; i < comments; i++)
    writer.handle(snapshotted, cardStream(id), { type: 'CommentCard', text: `c${i}` }, { actor: 't' });
  // A fresh connection: nothing cached, as after a restart.
  const cold = () => {
    const engine = Engine.open({ file, projections: TEST_PROJECTIONS, durability: 'normal' });
    cleanups.push(() => engine.close());
    return engine;
  };
  return { writer, id, cold, stream: cardStream(id) };
}

const coldLoad = (engine: Engine, decider: typeof snapshotted, stream: string) => {
  const before = foldedEvents();
  const loaded = engine.transact({ actor: 't' }, () => loadState(engine.db, decider, stream)).value!;
  return { ...loaded, folded: foldedEvents() - before };
};

describe('stream snapshots', () => {
  it('a cold load folds only the events after the snapshot, and gives the state a full fold gives', () => {
    const n = SNAPSHOT_EVERY * 2 + 150;
    const { writer, cold, stream } = longCard(n);
    const rows = writer.db
      .prepare('SELECT version FROM es_snapshots WHERE stream_id = ?')
      .pluck()
      .all(stream) as number[];
    assert.equal(rows.length, 1, 'one snapshot per stream and decider, overwritten as it advances');
    assert.ok(rows[0]! >= SNAPSHOT_EVERY * 2, `the snapshot is recent: version ${rows[0]}`);
    const loaded = coldLoad(cold(), snapshotted, stream);
    assert.ok(loaded.folded < SNAPSHOT_EVERY, `folded ${loaded.folded} of ${n + 1} events`);
    const full = loadState(writer.db, cardDecider, stream, Number.MAX_SAFE_INTEGER - 1);
    assert.deepEqual({ state: loaded.state, version: loaded.version }, full);
    assert.deepEqual(loaded.state, { status: 'open', cardId: 1, column: 'todo', comments: n });
  });

  it('ignores a snapshot the log no longer holds, of another decider version, or unreadable', () => {
    const n = SNAPSHOT_EVERY + 10;
    const { writer, cold, stream } = longCard(n);
    const expected = { status: 'open', cardId: 1, column: 'todo', comments: n };
    // Another decider version never reads this one's snapshot.
    assert.equal(coldLoad(cold(), { ...snapshotted, snapshot: { name: 'card', version: 2 } }, stream).folded, n + 1);
    // A snapshot claiming a hash the log does not hold at its version (a rewritten log, a rolled-back write).
    writer.db.prepare(`UPDATE es_snapshots SET hash = ? WHERE stream_id = ?`).run('0'.repeat(64), stream);
    const mismatched = coldLoad(cold(), snapshotted, stream);
    assert.equal(mismatched.folded, n + 1);
    assert.deepEqual(mismatched.state, expected);
    // A forged state with the right hash but bytes that do not deserialize.
    const head = writer.db
      .prepare('SELECT version, hash FROM es_events WHERE stream_id = ? ORDER BY version DESC LIMIT 1')
      .get(stream) as { version: number; hash: string };
    writer.db
      .prepare(`UPDATE es_snapshots SET version = ?, hash = ?, state = ? WHERE stream_id = ?`)
      .run(head.version, head.hash, Buffer.from([0xff, 0x0f, 0x99]), stream);
    const unreadable = coldLoad(cold(), snapshotted, stream);
    assert.equal(unreadable.folded, n + 1);
    assert.deepEqual(unreadable.state, expected);
  });

  it('a snapshot written by a command that rolls back is gone with it', () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const engine = Engine.open({ file: join(dir, 'c.db'), projections: TEST_PROJECTIONS, durability: 'normal' });
    cleanups.push(() => engine.close());
    const id = openCard(engine, 'short');
    engine.transact({ actor: 't' }, () => {
      for (let i = 0; i < SNAPSHOT_EVERY - 1; i++)
        engine.handle(cardDecider, cardStream(id), { type: 'CommentCard', text: 'c' }, { actor: 't' });
    });
    assert.throws(
      () =>
        engine.transact({ actor: 't' }, () => {
          engine.handle(snapshotted, cardStream(id), { type: 'CommentCard', text: 'last' }, { actor: 't' });
          engine.handle(snapshotted, cardStream(id), { type: 'CommentCard', text: 'one more' }, { actor: 't' });
          throw new Error('refused');
        }),
      /refused/,
    );
    assert.equal(engine.db.prepare('SELECT COUNT(*) FROM es_snapshots').pluck().get(), 0);
    // The same load in a command that commits leaves its snapshot.
    engine.handle({ ...snapshotted }, cardStream(id), { type: 'CommentCard', text: 'last' }, { actor: 't' });
    assert.equal(engine.db.prepare('SELECT COUNT(*) FROM es_snapshots').pluck().get(), 1);
  });
});
