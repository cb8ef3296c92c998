import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Database } from 'better-sqlite3';
import { ConcurrencyError, DomainError, type ExpectedVersion } from '../../src/errors.js';
import { GENESIS_HASH } from '../../src/engine/hash.js';
import { appendToStream, iterateAll, readAll, readHead, readStream, streamVersion } from '../../src/engine/store.js';
import { AT, append, countEvents, ev, meta, rawRows, storeDb } from '../helpers/event-log.js';

/** Three streams interleaved: a-1 ×3, b-1 ×2, a-2 ×1 → positions 1..6. */
function interleaved(): Database {
  const db = storeDb();
  append(db, 'a-1', 'no_stream', [ev('E', { n: 1 }), ev('E', { n: 2 })]);
  append(db, 'b-1', 'no_stream', [ev('E', { n: 3 })]);
  append(db, 'a-1', 2, [ev('E', { n: 4 })]);
  append(db, 'a-2', 'any', [ev('E', { n: 5 })]);
  append(db, 'b-1', 1, [ev('E', { n: 6 })]);
  return db;
}

const positions = (events: readonly { position: number }[]): number[] => events.map((e) => e.position);
const versions = (events: readonly { version: number }[]): number[] => events.map((e) => e.version);

describe('appendToStream', () => {
  it('gives global positions from 1 without gaps and stream versions from 1', () => {
    const db = interleaved();
    const rows = rawRows(db);
    assert.deepEqual(
      rows.map((r) => r.position),
      [1, 2, 3, 4, 5, 6],
    );
    assert.deepEqual(
      rows.map((r) => [r.stream_id, r.version]),
      [
        ['a-1', 1],
        ['a-1', 2],
        ['b-1', 1],
        ['a-1', 3],
        ['a-2', 1],
        ['b-1', 2],
      ],
    );
    assert.deepEqual(readHead(db), { position: 6, hash: rows[5]!.hash });
  });

  it('returns the stored events exactly as a later read sees them', () => {
    const db = storeDb();
    const stored = append(
      db,
      's-1',
      'no_stream',
      [ev('A', { x: 1, nested: { b: [1, 'two'] } }), ev('B', null)],
      meta('c-9'),
    );
    assert.deepEqual(stored, readStream(db, 's-1'));
    const raw = db.prepare('SELECT prev_hash, hash FROM es_events ORDER BY position').all() as {
      prev_hash: string;
      hash: string;
    }[];
    assert.equal(raw[0]!.prev_hash, GENESIS_HASH);
    assert.equal(raw[1]!.prev_hash, raw[0]!.hash);
    assert.deepEqual(stored[0]!.meta, meta('c-9'));
    assert.equal(stored[0]!.recordedAt, AT);
    assert.equal(stored[0]!.schemaVersion, 1);
  });

  it('stores data and meta as canonical JSON (sorted keys, no whitespace)', () => {
    const db = storeDb();
    append(db, 's-1', 'any', [ev('A', { z: 1, a: { d: 2, c: 3 } })]);
    const [row] = rawRows(db);
    assert.equal(row!.data, '{"a":{"c":3,"d":2},"z":1}');
    assert.equal(row!.meta, '{"actor":"tester","causationId":null,"commandId":"cmd-1","correlationId":null}');
  });

  it('appends nothing and keeps the head for an empty list of events', () => {
    const db = storeDb();
    assert.deepEqual(append(db, 's-1', 'no_stream', []), []);
    assert.equal(countEvents(db), 0);
    assert.deepEqual(readHead(db), { position: 0, hash: GENESIS_HASH });
  });

  it('throws when called outside a transaction, and writes nothing', () => {
    const db = storeDb();
    assert.throws(() => appendToStream(db, 's-1', 'any', [ev('A')], meta(), AT), /inside a write transaction/);
    assert.equal(countEvents(db), 0);
  });

  it('refuses an empty stream id with ErrInvalidInput', () => {
    const db = storeDb();
    assert.throws(
      () => append(db, '', 'any', [ev('A')]),
      (e: unknown) => e instanceof DomainError && e.code === 'ErrInvalidInput',
    );
    assert.equal(countEvents(db), 0);
  });

  for (const [label, data] of [
    ['NaN', { x: NaN }],
    ['Infinity', { x: Infinity }],
    ['a BigInt', { x: 10n }],
  ] as const) {
    it(`refuses data containing ${label} with ErrInvalidInput and writes nothing`, () => {
      const db = storeDb();
      append(db, 's-1', 'no_stream', [ev('A', { ok: true })]);
      const before = { rows: rawRows(db), head: readHead(db) };
      assert.throws(
        () => append(db, 's-1', 1, [ev('B', { ok: true }), ev('C', data)]),
        (e: unknown) => e instanceof DomainError && e.code === 'ErrInvalidInput' && /not JSON/.test(e.message),
      );
      assert.deepEqual(rawRows(db), before.rows);
      assert.deepEqual(readHead(db), before.head);
    });
  }

  it('writes nothing for a batch with non-JSON data even when the caller catches the error in its transaction', () => {
    // The function's own contract: a failed append leaves no trace, whatever the caller does with the error.
    const db = storeDb();
    append(db, 's-1', 'no_stream', [ev('A')]);
    const before = { rows: rawRows(db), head: readHead(db) };
    db.transaction(() => {
      assert.throws(() => appendToStream(db, 's-1', 1, [ev('B'), ev('C', { x: NaN })], meta(), AT), /not JSON/);
    }).immediate();
    assert.deepEqual(rawRows(db), before.rows);
    assert.deepEqual(readHead(db), before.head);
    assert.doesNotThrow(() => append(db, 's-1', 1, [ev('B')]), 'the store still accepts the next append');
  });
});

describe('appendToStream expected versions', () => {
  const rejects = (db: Database, streamId: string, expected: ExpectedVersion, actual: number): void => {
    const before = { rows: rawRows(db), head: readHead(db) };
    assert.throws(
      () => append(db, streamId, expected, [ev('X')]),
      (e: unknown) => {
        assert.ok(e instanceof ConcurrencyError);
        assert.equal(e.code, 'ErrConcurrency');
        assert.deepEqual(e.details, { streamId, expected, actual });
        return true;
      },
    );
    assert.deepEqual(rawRows(db), before.rows, 'es_events unchanged');
    assert.deepEqual(readHead(db), before.head, 'es_head unchanged');
  };

  it('accepts an exact expected version that matches', () => {
    const db = interleaved();
    const [e] = append(db, 'a-1', 3, [ev('X')]);
    assert.equal(e!.version, 4);
    assert.equal(e!.position, 7);
  });

  it('rejects a stale expected version with ErrConcurrency', () => {
    rejects(interleaved(), 'a-1', 2, 3);
  });

  it('rejects an expected version ahead of the stream with ErrConcurrency', () => {
    rejects(interleaved(), 'a-1', 4, 3);
  });

  it('rejects an exact expected version on a stream that does not exist', () => {
    rejects(interleaved(), 'c-1', 1, 0);
  });

  it("accepts 'no_stream' on a new stream", () => {
    const db = interleaved();
    const [e] = append(db, 'c-1', 'no_stream', [ev('X')]);
    assert.equal(e!.version, 1);
  });

  it("accepts the expected version 0 on a new stream, like 'no_stream'", () => {
    const db = storeDb();
    assert.equal(append(db, 'c-1', 0, [ev('X')])[0]!.version, 1);
  });

  it("rejects 'no_stream' on an existing stream with ErrConcurrency", () => {
    rejects(interleaved(), 'b-1', 'no_stream', 2);
  });

  it("accepts 'any' on a new and on an existing stream", () => {
    const db = interleaved();
    assert.equal(append(db, 'c-1', 'any', [ev('X')])[0]!.version, 1);
    assert.equal(append(db, 'b-1', 'any', [ev('X')])[0]!.version, 3);
    assert.equal(streamVersion(db, 'b-1'), 3);
  });
});

describe('readStream', () => {
  it("reads one stream's events in version order", () => {
    const db = interleaved();
    const events = readStream(db, 'a-1');
    assert.deepEqual(versions(events), [1, 2, 3]);
    assert.deepEqual(positions(events), [1, 2, 4]);
    assert.deepEqual(
      events.map((e) => e.data),
      [{ n: 1 }, { n: 2 }, { n: 4 }],
    );
    assert.ok(events.every((e) => e.streamId === 'a-1'));
  });

  it('reads nothing for a stream that does not exist', () => {
    assert.deepEqual(readStream(interleaved(), 'nope-1'), []);
  });

  it('honours from, to and max', () => {
    const db = storeDb();
    append(
      db,
      's-1',
      'no_stream',
      [1, 2, 3, 4, 5].map((n) => ev('E', { n })),
    );
    assert.deepEqual(versions(readStream(db, 's-1', { from: 3 })), [3, 4, 5]);
    assert.deepEqual(versions(readStream(db, 's-1', { to: 2 })), [1, 2]);
    assert.deepEqual(versions(readStream(db, 's-1', { from: 2, to: 4 })), [2, 3, 4]);
    assert.deepEqual(versions(readStream(db, 's-1', { max: 2 })), [1, 2]);
    assert.deepEqual(versions(readStream(db, 's-1', { from: 2, max: 2 })), [2, 3]);
    assert.deepEqual(versions(readStream(db, 's-1', { from: 4, to: 9, max: 9 })), [4, 5]);
    assert.deepEqual(readStream(db, 's-1', { from: 6 }), []);
  });

  it('reports the stream version through streamVersion (0 when absent)', () => {
    const db = interleaved();
    assert.equal(streamVersion(db, 'a-1'), 3);
    assert.equal(streamVersion(db, 'b-1'), 2);
    assert.equal(streamVersion(db, 'nope-1'), 0);
  });
});

describe('readAll', () => {
  it('reads the whole log in position order', () => {
    const db = interleaved();
    const all = readAll(db);
    assert.deepEqual(positions(all), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(
      all.map((e) => e.streamId),
      ['a-1', 'a-1', 'b-1', 'a-1', 'a-2', 'b-1'],
    );
  });

  it('reads strictly after a position, in pages, and stops at `to`', () => {
    const db = interleaved();
    assert.deepEqual(positions(readAll(db, { after: 4 })), [5, 6]);
    assert.deepEqual(positions(readAll(db, { after: 1, limit: 2 })), [2, 3]);
    assert.deepEqual(positions(readAll(db, { after: 3, limit: 2 })), [4, 5]);
    assert.deepEqual(positions(readAll(db, { to: 3 })), [1, 2, 3]);
    assert.deepEqual(positions(readAll(db, { after: 2, to: 4 })), [3, 4]);
    assert.deepEqual(positions(readAll(db, { after: 6 })), []);
    assert.deepEqual(positions(readAll(db, { after: 4, to: 4 })), []);
  });

  it('pages through the log with after = the last position of the previous page', () => {
    const db = interleaved();
    const seen: number[] = [];
    for (
      let after = 0, page = readAll(db, { after, limit: 4 });
      page.length > 0;
      page = readAll(db, { after, limit: 4 })
    ) {
      seen.push(...positions(page));
      after = page[page.length - 1]!.position;
    }
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
  });
});

describe('iterateAll', () => {
  function longLog(n: number): Database {
    const db = storeDb();
    db.transaction(() => {
      for (let i = 1; i <= n; i += 1) appendToStream(db, `s-${i % 7}`, 'any', [ev('E', { i })], meta(`c-${i}`), AT);
    }).immediate();
    return db;
  }

  it('walks a log longer than one default page (1000) completely and in order', () => {
    const db = longLog(2345);
    const seen = [...iterateAll(db)].map((e) => e.position);
    assert.equal(seen.length, 2345);
    assert.ok(seen.every((p, i) => p === i + 1));
  });

  it('walks in small pages, including a log that is an exact multiple of the page size', () => {
    const db = longLog(12);
    assert.deepEqual(
      [...iterateAll(db, { limit: 5 })].map((e) => e.position),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    );
    assert.deepEqual(
      [...iterateAll(db, { limit: 4 })].map((e) => e.position),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    );
  });

  it('starts after `after` and stops at `to` across pages', () => {
    const db = longLog(12);
    assert.deepEqual(
      [...iterateAll(db, { after: 3, to: 9, limit: 2 })].map((e) => e.position),
      [4, 5, 6, 7, 8, 9],
    );
    assert.deepEqual(
      [...iterateAll(db, { after: 3, to: 8, limit: 5 })].map((e) => e.position),
      [4, 5, 6, 7, 8],
    );
    assert.deepEqual([...iterateAll(db, { after: 12 })], []);
  });

  it('yields the same events as readAll', () => {
    const db = interleaved();
    assert.deepEqual([...iterateAll(db, { limit: 2 })], readAll(db));
  });
});
