import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Database } from 'better-sqlite3';
import { EVENT_COLUMNS } from '../../src/engine/event.js';
import { append, ev, rawRows, readHead, storeDb } from '../helpers/event-log.js';

/** Two streams, three events. */
function smallLog(): Database {
  const db = storeDb();
  append(db, 'a-1', 'no_stream', [ev('A', { n: 1 }), ev('A', { n: 2 })]);
  append(db, 'b-1', 'no_stream', [ev('B', { n: 3 })]);
  return db;
}

/** A value of the right type that differs from the stored one and violates no constraint. */
const NEW_VALUES: Record<string, unknown> = {
  position: 99,
  stream_id: 'z-9',
  version: 50,
  type: 'Forged',
  schema_version: 7,
  data: '{"n":42}',
  meta: '{"actor":"mallory","causationId":null,"commandId":"x","correlationId":null}',
  recorded_at: '1999-01-01T00:00:00.000Z',
  prev_hash: 'f'.repeat(64),
  hash: 'e'.repeat(64),
};

const COLUMNS = EVENT_COLUMNS.split(', ');

describe('es_events append-only triggers', () => {
  it('covers every column of the row', () => {
    assert.deepEqual(Object.keys(NEW_VALUES).sort(), [...COLUMNS].sort());
  });

  for (const column of COLUMNS) {
    it(`rejects an UPDATE of ${column} with the trigger's message`, () => {
      const db = smallLog();
      const before = rawRows(db);
      assert.throws(
        () => db.prepare(`UPDATE es_events SET ${column} = ? WHERE position = 2`).run(NEW_VALUES[column]),
        /es_events is append-only: UPDATE is not allowed/,
      );
      assert.deepEqual(rawRows(db), before);
    });
  }

  it('rejects an UPDATE that writes the same value back', () => {
    const db = smallLog();
    assert.throws(() => db.exec('UPDATE es_events SET data = data'), /es_events is append-only: UPDATE is not allowed/);
  });

  it('rejects an upsert that would update an existing row', () => {
    const db = smallLog();
    const before = rawRows(db);
    assert.throws(
      () =>
        db.exec(`INSERT INTO es_events (${EVENT_COLUMNS})
          SELECT ${EVENT_COLUMNS} FROM es_events WHERE position = 1
          ON CONFLICT(position) DO UPDATE SET data = '{"n":42}'`),
      /es_events is append-only: UPDATE is not allowed/,
    );
    assert.deepEqual(rawRows(db), before);
  });

  for (const [label, where] of [
    ['a single row', 'WHERE position = 2'],
    ['the last row', 'WHERE position = 3'],
    ['a whole stream', "WHERE stream_id = 'a-1'"],
    ['every row', ''],
  ] as const) {
    it(`rejects a DELETE of ${label} with the trigger's message`, () => {
      const db = smallLog();
      const before = rawRows(db);
      assert.throws(() => db.exec(`DELETE FROM es_events ${where}`), /es_events is append-only: DELETE is not allowed/);
      assert.deepEqual(rawRows(db), before);
    });
  }

  it('rejects INSERT OR REPLACE over an existing position (REPLACE deletes the old row)', () => {
    const db = smallLog();
    const before = rawRows(db);
    assert.throws(() =>
      db.exec(`INSERT OR REPLACE INTO es_events (${EVENT_COLUMNS})
        SELECT position, stream_id, version, type, schema_version, '{"n":42}', meta, recorded_at, prev_hash, hash
        FROM es_events WHERE position = 1`),
    );
    assert.deepEqual(rawRows(db), before);
  });

  it('rejects INSERT OR REPLACE of an existing (stream_id, version) at a new position', () => {
    const db = smallLog();
    const before = rawRows(db);
    assert.throws(() =>
      db.exec(`INSERT OR REPLACE INTO es_events (${EVENT_COLUMNS})
        SELECT 4, stream_id, version, type, schema_version, '{"n":42}', meta, recorded_at, prev_hash, hash
        FROM es_events WHERE position = 1`),
    );
    assert.deepEqual(rawRows(db), before);
  });
});

describe('es_events UNIQUE (stream_id, version)', () => {
  it('rejects a raw INSERT of a version the stream already has, at the next position', () => {
    const db = smallLog();
    const before = rawRows(db);
    assert.throws(
      () =>
        db
          .prepare(`INSERT INTO es_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
          .run(4, 'a-1', 2, 'A', 1, '{}', '{}', '2026-01-01T00:00:00.000Z', readHead(db).hash, 'h'.repeat(64)),
      /UNIQUE constraint failed: es_events.stream_id, es_events.version/,
    );
    assert.deepEqual(rawRows(db), before);
  });

  it('rejects a raw INSERT at a position that is taken', () => {
    const db = smallLog();
    assert.throws(
      () =>
        db
          .prepare(`INSERT INTO es_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
          .run(3, 'c-1', 1, 'C', 1, '{}', '{}', '2026-01-01T00:00:00.000Z', 'p'.repeat(64), 'h'.repeat(64)),
      /UNIQUE constraint failed: es_events.position/,
    );
  });

  it('rejects versions and schema versions below 1', () => {
    const db = smallLog();
    const insert = db.prepare(`INSERT INTO es_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    assert.throws(() => insert.run(4, 'c-1', 0, 'C', 1, '{}', '{}', 't', 'p', 'h'), /CHECK constraint failed/);
    assert.throws(() => insert.run(4, 'c-1', 1, 'C', 0, '{}', '{}', 't', 'p', 'h'), /CHECK constraint failed/);
  });
});
