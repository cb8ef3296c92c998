import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { POSITIONS_SQL, positionsSql } from '../../src/engine/projection-positions.js';
import { openCard, runCard, testEngine, TEST_PROJECTIONS } from '../helpers/engine.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * A command moves the `$log` row alone while its process's projections are the row's followers
 * (src/engine/projection-positions.ts); rows become exact again whenever anything else sets positions.
 */
const raw = (engine: ReturnType<typeof testEngine>) =>
  engine.db.prepare(`SELECT name, position, followers FROM es_projections ORDER BY name`).all() as {
    name: string;
    position: number;
    followers: string;
  }[];
const effective = (engine: ReturnType<typeof testEngine>) =>
  (
    engine.db.prepare(`SELECT name, position FROM (${POSITIONS_SQL}) ORDER BY name`).all() as { position: number }[]
  ).map((r) => r.position);

describe('projection positions', () => {
  it('moves only the $log row per command, while every projection reads as at the head', () => {
    const engine = testEngine();
    const card = openCard(engine, 'First');
    const settled = raw(engine).filter((r) => r.name !== '$log');
    for (let i = 0; i < 5; i++) runCard(engine, card, { type: 'CommentCard', text: `note ${i}` });
    const head = engine.head().position;
    const log = raw(engine).find((r) => r.name === '$log')!;
    assert.equal(log.position, head);
    assert.equal(
      log.followers,
      TEST_PROJECTIONS.map((p) => p.name)
        .sort()
        .join(','),
    );
    // The projections' own rows were not written by the five commands...
    assert.deepEqual(
      raw(engine).filter((r) => r.name !== '$log'),
      settled,
    );
    // ...yet each reads as at the head, as status() and the start-up check see it.
    assert.deepEqual(
      effective(engine),
      TEST_PROJECTIONS.map(() => head),
    );
    assert.ok(engine.projections.status(engine.db).every((s) => s.position === head && !s.stale));
    engine.close();
  });

  it('writes exact rows before a rebuild sets positions, then follows again', () => {
    const engine = testEngine();
    const card = openCard(engine, 'First');
    runCard(engine, card, { type: 'CommentCard', text: 'note' });
    engine.rebuild();
    const head = engine.head().position;
    const rows = raw(engine);
    assert.equal(rows.find((r) => r.name === '$log')!.followers, '');
    assert.ok(rows.every((r) => r.position === head));
    runCard(engine, card, { type: 'CommentCard', text: 'after the rebuild' });
    assert.deepEqual(
      effective(engine),
      TEST_PROJECTIONS.map(() => engine.head().position),
    );
    assert.notEqual(raw(engine).find((r) => r.name === '$log')!.followers, '');
    engine.close();
  });

  it('reads the rows as they are in a file older than the followers column (a read-only open)', () => {
    const scratch = tempDir('colony-positions-');
    const file = join(scratch.dir, 'colony.db');
    const engine = testEngine({ file });
    const card = openCard(engine, 'First');
    runCard(engine, card, { type: 'CommentCard', text: 'note' });
    const head = engine.head().position;
    engine.db.exec('UPDATE es_projections SET position = (SELECT MAX(position) FROM es_events)');
    engine.db.exec('ALTER TABLE es_projections DROP COLUMN followers');
    engine.close();
    const old = new Database(file, { readonly: true });
    try {
      const rows = old.prepare(positionsSql(old)).all() as { position: number }[];
      assert.deepEqual(
        rows.map((r) => r.position),
        TEST_PROJECTIONS.map(() => head),
      );
    } finally {
      old.close();
      scratch.cleanup();
    }
  });
});
