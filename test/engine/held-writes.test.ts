import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { Projection } from '../../src/engine/projection.js';
import { later, run } from '../../src/engine/projection-sql.js';
import { cardDecider, cardStream, type CardCommented } from '../../testkit/cards.js';
import { openCard, TEST_PROJECTIONS, witnessedEngine } from '../helpers/engine.js';

/**
 * Writes a projection may hold to the end of its group-commit batch (projection-sql.ts `later`): a batch
 * runs its commands' held writes once, before its COMMIT, so FTS5 writes one index segment per batch
 * instead of one per command (each command is a SAVEPOINT, at which FTS5 writes what it holds). What a
 * command that failed held never runs; outside a batch a held write runs at once, in its command.
 * A comment index, an FTS5 table fed by `later` beside a plain table fed by `run`, shows both.
 */
type T = 'comment_rows' | 'comment_index';
const commentIndex: Projection<CardCommented, T> = {
  name: 'comment_index',
  version: 1,
  handles: ['CardCommented'],
  tables: ['comment_rows', 'comment_index'],
  init: (t) => `CREATE TABLE IF NOT EXISTS "${t.comment_rows}" (position INTEGER PRIMARY KEY, text TEXT NOT NULL);
    CREATE VIRTUAL TABLE IF NOT EXISTS "${t.comment_index}" USING fts5(text);`,
  *apply(e, t) {
    yield run(`INSERT INTO "${t.comment_rows}" (position, text) VALUES (?, ?)`, e.position, e.data.text);
    yield later(`INSERT INTO "${t.comment_index}" (rowid, text) VALUES (?, ?)`, e.position, e.data.text);
  },
};

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function setup() {
  const projections = [...TEST_PROJECTIONS, commentIndex];
  const { engine, witness, close } = witnessedEngine({ projections, durability: 'normal' });
  cleanups.push(close);
  const card = openCard(engine, 'indexed');
  const comment = (text: string) =>
    engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text }, { actor: 'tester' });
  /** Positions of the comments another connection sees: in the plain table, and found by the index. */
  const seen = () => ({
    rows: witness.prepare('SELECT position FROM comment_rows ORDER BY position').pluck().all() as number[],
    indexed: witness.prepare('SELECT rowid FROM comment_index ORDER BY rowid').pluck().all() as number[],
  });
  const search = (word: string) =>
    witness.prepare('SELECT rowid FROM comment_index WHERE comment_index MATCH ? ORDER BY rowid').pluck().all(word);
  return { engine, comment, seen, search };
}

describe('writes held to the end of a batch', () => {
  it('are indexed with the batch, in one FTS5 segment, and searchable once the callers are answered', async () => {
    const { engine, comment, seen, search } = setup();
    const segments = () => engine.db.prepare('SELECT COUNT(*) FROM comment_index_data').pluck().get() as number;
    const before = segments();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => engine.group.run(() => comment(`alpha word${i}`))),
    );
    const positions = results.map((r) => r.events[0]!.position);
    assert.deepEqual(seen(), { rows: positions, indexed: positions });
    assert.deepEqual(search('alpha'), positions);
    assert.deepEqual(search('word7'), [positions[7]]);
    // One batch, one segment: ten commands each flushed at its own savepoint would have written ten.
    assert.equal(segments() - before, 1, 'the batch wrote one index segment');
  });

  it('never runs what a failed command of the batch held, and runs what the others held', async () => {
    const { engine, comment, seen, search } = setup();
    const good = engine.group.run(() => comment('kept one'));
    const bad = engine.group.run(() =>
      engine.transact({ actor: 'tester' }, () => {
        comment('rolled back');
        throw new Error('refused after its comment was projected');
      }),
    );
    const after = engine.group.run(() => comment('kept two'));
    await assert.rejects(bad, /refused after its comment/);
    const kept = [(await good).events[0]!.position, (await after).events[0]!.position];
    assert.deepEqual(seen(), { rows: kept, indexed: kept });
    assert.deepEqual(search('rolled'), []);
  });

  it('drops what a nested command held when its failure is caught, and keeps the rest of the command', async () => {
    const { engine, comment, seen, search } = setup();
    const result = await engine.group.run(() =>
      engine.transact({ actor: 'tester' }, () => {
        comment('outer before');
        try {
          engine.transact({ actor: 'tester' }, () => {
            comment('inner undone');
            throw new Error('inner refused');
          });
        } catch {
          /* the caller goes on without the inner command */
        }
        comment('outer after');
      }),
    );
    const kept = result.events.map((e) => e.position);
    assert.equal(kept.length, 2);
    assert.deepEqual(seen(), { rows: kept, indexed: kept });
    assert.deepEqual(search('inner'), []);
  });

  it('run at once outside a batch: the command itself sees its index row', () => {
    const { engine, comment, search } = setup();
    const found = engine.transact({ actor: 'tester' }, () => {
      const { events } = comment('immediate');
      return {
        position: events[0]!.position,
        inside: engine.db
          .prepare("SELECT rowid FROM comment_index WHERE comment_index MATCH 'immediate'")
          .pluck()
          .all(),
      };
    }).value!;
    assert.deepEqual(found.inside, [found.position]);
    assert.deepEqual(search('immediate'), [found.position]);
  });

  it('fail the whole batch when one cannot run, before the COMMIT: no caller is told done', async () => {
    const { engine, comment, seen } = setup();
    const before = seen();
    const calls = [engine.group.run(() => comment('first')), engine.group.run(() => comment('second'))];
    // The index goes away under the batch: its held writes fail at the batch's end.
    engine.db.exec('DROP TABLE comment_index');
    for (const call of calls) await assert.rejects(call, /COMMIT failed.*no such table: comment_index/);
    assert.deepEqual(seen().rows, before.rows, 'nothing of the batch was committed');
  });
});
