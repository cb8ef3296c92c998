import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../src/errors.js';
import type { EventRow, StoredEvent } from '../../src/engine/event.js';
import { rowHash } from '../../src/engine/hash.js';
import { importRows } from '../../src/engine/command-log.js';
import { readAll } from '../../src/engine/store.js';
import type { Engine } from '../../src/engine/engine.js';
import { dumpTables, openCard, PROJECTED_TABLES, runCard, testEngine } from '../helpers/engine.js';
import { chainRow, rawRows, readHead, storeDb } from '../helpers/event-log.js';

/** A source log of 8 events across 3 card streams, exported as raw rows. */
function exported(): { source: Engine; rows: EventRow[] } {
  const source = testEngine();
  const a = openCard(source, 'Import card A');
  const b = openCard(source, 'Import card B');
  runCard(source, a, { type: 'MoveCard', to: 'doing' });
  runCard(source, b, { type: 'CommentCard', text: 'hello' });
  const c = openCard(source, 'Import card C');
  runCard(source, a, { type: 'FinishCard', reason: 'shipped' });
  runCard(source, c, { type: 'CommentCard', text: 'bye' });
  return { source, rows: rawRows(source.db) };
}

const chainMismatch = (position: number, message: RegExp) => (e: unknown) => {
  assert.ok(e instanceof DomainError, String(e));
  assert.equal(e.code, 'ErrChainMismatch');
  assert.deepEqual(e.details, { position });
  assert.match(e.message, message);
  return true;
};

describe('importRows', () => {
  it('accepts an exported log into a fresh database with the same rows, hashes and head', () => {
    const { source, rows } = exported();
    const target = testEngine();
    const stored = target.importRows(rows);
    assert.equal(stored.length, 8);
    assert.deepEqual(rawRows(target.db), rows);
    assert.deepEqual(target.head(), source.head());
    assert.deepEqual(readAll(target.db), readAll(source.db));
    assert.deepEqual(target.verify(), source.verify());
    assert.equal(target.verify().ok, true);
  });

  it('projects the imported events like the original appends did', () => {
    const { source, rows } = exported();
    const target = testEngine();
    target.importRows(rows);
    assert.deepEqual(dumpTables(target.db, PROJECTED_TABLES), dumpTables(source.db, PROJECTED_TABLES));
  });

  it('continues the chain across batches and after local appends', () => {
    const { rows } = exported();
    const target = testEngine();
    target.importRows(rows.slice(0, 3));
    target.importRows(rows.slice(3));
    assert.deepEqual(rawRows(target.db), rows);
    runCard(target, 3, { type: 'MoveCard', to: 'review' });
    assert.equal(target.head().position, 9);
    assert.equal(target.verify().ok, true);
  });

  it('works at the store level inside the caller transaction and publishes nothing itself', () => {
    const { rows } = exported();
    const db = storeDb();
    const stored = db.transaction(() => importRows(db, rows, '2026-01-01T00:00:00.000Z')).immediate();
    assert.deepEqual(
      stored.map((e) => e.position),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.deepEqual(readHead(db), { position: 8, hash: rows[7]!.hash });
  });

  it('throws outside a transaction', () => {
    const { rows } = exported();
    const db = storeDb();
    assert.throws(() => importRows(db, rows, '2026-01-01T00:00:00.000Z'), /inside a write transaction/);
    assert.deepEqual(rawRows(db), []);
  });

  it('publishes the imported events after commit', () => {
    const { rows } = exported();
    const target = testEngine();
    const seen: StoredEvent[] = [];
    target.bus.events$.subscribe((e) => seen.push(e));
    target.importRows(rows);
    assert.deepEqual(
      seen.map((e) => e.position),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
  });
});

describe('importRows refusals', () => {
  /** Imports rows 1..3 first, then a batch of (4, 5, bad 6, 7, 8) that must be refused as a whole. */
  function refuses(bad: (row: EventRow, rows: EventRow[]) => EventRow, message: RegExp, reported = 6): void {
    const at = 6;
    const { rows } = exported();
    const target = testEngine();
    target.importRows(rows.slice(0, 3));
    const before = { rows: rawRows(target.db), head: target.head(), tables: dumpTables(target.db, PROJECTED_TABLES) };
    const seen: StoredEvent[] = [];
    target.bus.events$.subscribe((e) => seen.push(e));
    const batch = rows.slice(3).map((r) => (r.position === at ? bad({ ...r }, rows) : r));
    assert.throws(() => target.importRows(batch), chainMismatch(reported, message));
    assert.deepEqual(rawRows(target.db), before.rows, 'nothing of the batch was kept');
    assert.deepEqual(target.head(), before.head);
    assert.deepEqual(dumpTables(target.db, PROJECTED_TABLES), before.tables);
    assert.deepEqual(seen, [], 'nothing was published');
    assert.equal(target.verify().ok, true);
  }

  it('refuses a row whose hash does not match its content', () => {
    refuses((r) => ({ ...r, hash: r.hash.replace(/^./, (c) => (c === '0' ? '1' : '0')) }), /hash of position 6/);
  });

  it('refuses a row whose content was edited under its original hash', () => {
    refuses(
      (r) => ({ ...r, data: r.data.replace('"doing"', '"done!"').replace('"todo"', '"tod0"') }),
      /hash of position 6/,
    );
  });

  it("refuses a row whose prev_hash is not the head's hash", () => {
    refuses((r, rows) => chainRow({ ...r, prev_hash: rows[3]!.hash }), /prev_hash of position 6/);
  });

  it('refuses a row at the wrong position even when its own hash is right', () => {
    refuses(
      (r, rows) => chainRow({ ...r, position: 7 }, { position: 5, hash: rows[4]!.hash }),
      /position 7 does not follow the head 5/,
      7,
    );
  });

  it('refuses a correctly hashed row whose version skips ahead in its stream', () => {
    refuses(
      (r, rows) => chainRow({ ...r, version: r.version + 1 }, { position: 5, hash: rows[4]!.hash }),
      /out of sequence/,
    );
  });

  it('refuses a correctly hashed row that repeats a version its stream already has', () => {
    refuses(
      (r, rows) => chainRow({ ...r, version: r.version - 1 }, { position: 5, hash: rows[4]!.hash }),
      /out of sequence/,
    );
  });

  it('refuses a correctly hashed first event of a new stream at version 2', () => {
    const db = storeDb();
    const row = chainRow({
      stream_id: 's-1',
      version: 2,
      type: 'A',
      schema_version: 1,
      data: '{}',
      meta: '{"actor":"t","commandId":"c"}',
      recorded_at: 't',
    });
    assert.equal(rowHash(row), row.hash);
    assert.throws(
      () => db.transaction(() => importRows(db, [row], '2026-01-01T00:00:00.000Z')).immediate(),
      chainMismatch(1, /version 2 of s-1 is out of sequence/),
    );
    assert.deepEqual(rawRows(db), []);
  });

  it('refuses a whole exported log into a database that already has events', () => {
    const { rows } = exported();
    const target = testEngine();
    openCard(target, 'Local card');
    const before = rawRows(target.db);
    assert.throws(() => target.importRows(rows), chainMismatch(1, /position 1 does not follow the head 1/));
    assert.deepEqual(rawRows(target.db), before);
  });

  it('refuses a log with its first row missing', () => {
    const { rows } = exported();
    const target = testEngine();
    assert.throws(() => target.importRows(rows.slice(1)), chainMismatch(2, /position 2 does not follow the head 0/));
    assert.deepEqual(rawRows(target.db), []);
  });
});
