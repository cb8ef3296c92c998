import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Database } from 'better-sqlite3';
import type { Engine } from '../../src/engine/engine.js';
import { EVENT_COLUMNS, type EventRow } from '../../src/engine/event.js';
import type { VerifyFailure } from '../../src/engine/verify.js';
import { openCard, runCard, testEngine } from '../helpers/engine.js';
import { chainRow, dropAppendOnlyTriggers, rawRow, rehashFrom } from '../helpers/event-log.js';

/**
 * Tampering: every case builds a fresh log of 12 events over 3 card streams, drops the append-only
 * triggers as an attacker with file access would, changes one thing, and expects verify() to fail at
 * exactly the position that was touched.
 */
const EVENTS = 12;

function buildLog(): Engine {
  const engine = testEngine();
  const a = openCard(engine, 'Verify card A'); // 1
  const b = openCard(engine, 'Verify card B'); // 2
  const c = openCard(engine, 'Verify card C'); // 3
  runCard(engine, a, { type: 'MoveCard', to: 'doing' }); // 4
  runCard(engine, b, { type: 'CommentCard', text: 'looks good' }); // 5
  runCard(engine, a, { type: 'CommentCard', text: 'on it' }); // 6
  runCard(engine, b, { type: 'FinishCard', reason: 'shipped' }); // 7, 8
  runCard(engine, c, { type: 'MoveCard', to: 'doing' }); // 9
  runCard(engine, c, { type: 'CommentCard', text: 'halfway' }); // 10
  runCard(engine, a, { type: 'FinishCard', reason: 'done' }); // 11, 12
  assert.equal(engine.head().position, EVENTS);
  dropAppendOnlyTriggers(engine.db);
  return engine;
}

const POSITIONS = Array.from({ length: EVENTS }, (_, i) => i + 1);

/** Flips the lowest bit of one ASCII character: one byte changes, JSON stays valid inside a string. */
const flip = (s: string, i: number): string =>
  s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ 1) + s.slice(i + 1);
/** The first character inside the first string value of a JSON object. */
const firstStringValue = (json: string): number => json.indexOf('":"') + 3;

type Tamper = { column: keyof EventRow; change: (row: EventRow) => unknown; reason: VerifyFailure };

const TAMPERS: Tamper[] = [
  { column: 'data', change: (r) => flip(r.data, firstStringValue(r.data)), reason: 'hash_mismatch' },
  { column: 'type', change: (r) => flip(r.type, r.type.length - 1), reason: 'hash_mismatch' },
  { column: 'meta', change: (r) => flip(r.meta, firstStringValue(r.meta)), reason: 'hash_mismatch' },
  { column: 'hash', change: (r) => flip(r.hash, 0), reason: 'hash_mismatch' },
  { column: 'prev_hash', change: (r) => flip(r.prev_hash, 0), reason: 'broken_link' },
  { column: 'stream_id', change: (r) => flip(r.stream_id, 0), reason: 'hash_mismatch' },
  { column: 'version', change: (r) => r.version + 100, reason: 'hash_mismatch' },
  { column: 'recorded_at', change: (r) => flip(r.recorded_at, 18), reason: 'hash_mismatch' },
  { column: 'schema_version', change: (r) => r.schema_version + 1, reason: 'hash_mismatch' },
];

function expectFailure(engine: Engine, position: number, reason: VerifyFailure, pageSize?: number): void {
  const result = engine.verify(pageSize ? { pageSize } : undefined);
  assert.equal(result.ok, false, 'verify must fail');
  if (result.ok) return;
  assert.deepEqual({ position: result.position, reason: result.reason }, { position, reason }, result.message);
}

const setColumn = (db: Database, position: number, column: string, value: unknown): void => {
  db.prepare(`UPDATE es_events SET ${column} = ? WHERE position = ?`).run(value, position);
};

/** Exchanges every column but position between two rows (via a free stream id, for the UNIQUE constraint). */
function swapRows(db: Database, i: number, j: number): void {
  const [a, b] = [rawRow(db, i), rawRow(db, j)];
  const set =
    db.prepare(`UPDATE es_events SET stream_id = ?, version = ?, type = ?, schema_version = ?, data = ?, meta = ?,
    recorded_at = ?, prev_hash = ?, hash = ? WHERE position = ?`);
  const put = (r: EventRow, position: number, streamId = r.stream_id) =>
    set.run(
      streamId,
      r.version,
      r.type,
      r.schema_version,
      r.data,
      r.meta,
      r.recorded_at,
      r.prev_hash,
      r.hash,
      position,
    );
  put(a, i, 'swap-tmp');
  put(a, j);
  put(b, i);
}

describe('verify on an untampered log', () => {
  it('passes and reports the event count and head', () => {
    const engine = buildLog();
    assert.deepEqual(engine.verify(), { ok: true, events: EVENTS, head: engine.head() });
  });

  it('passes with pages smaller than the log and reports progress up to the head', () => {
    const engine = buildLog();
    const progress: [number, number][] = [];
    const result = engine.verify({ pageSize: 5, onProgress: (done, total) => progress.push([done, total]) });
    assert.equal(result.ok, true);
    assert.deepEqual(progress.at(-1), [EVENTS, EVENTS]);
  });

  it('passes on an empty log', () => {
    const engine = testEngine();
    assert.deepEqual(engine.verify(), { ok: true, events: 0, head: engine.head() });
  });
});

describe('verify after changing one column of one row', () => {
  for (const { column, change, reason } of TAMPERS) {
    for (const position of POSITIONS) {
      it(`fails at ${position} with ${reason} when ${column} of row ${position} changes`, () => {
        const engine = buildLog();
        const row = rawRow(engine.db, position);
        const value = change(row);
        assert.notEqual(value, row[column]);
        setColumn(engine.db, position, column, value);
        assert.equal(rawRow(engine.db, position)[column], value);
        expectFailure(engine, position, reason);
      });
    }
  }

  it('finds a changed row behind a page boundary', () => {
    const engine = buildLog();
    setColumn(engine.db, 6, 'data', flip(rawRow(engine.db, 6).data, 20));
    expectFailure(engine, 6, 'hash_mismatch', 5);
  });
});

describe('verify after deleting a row', () => {
  for (const position of POSITIONS) {
    const last = position === EVENTS;
    it(`fails at ${position} with ${last ? 'head_mismatch' : 'position_gap'} when row ${position} is deleted`, () => {
      const engine = buildLog();
      engine.db.prepare('DELETE FROM es_events WHERE position = ?').run(position);
      expectFailure(engine, position, last ? 'head_mismatch' : 'position_gap');
    });
  }

  it('fails at the first removed position with head_mismatch when a tail is cut off', () => {
    const engine = buildLog();
    engine.db.exec('DELETE FROM es_events WHERE position >= 10');
    expectFailure(engine, 10, 'head_mismatch');
  });

  it('finds a deleted row at a page boundary', () => {
    for (const position of [5, 6]) {
      const engine = buildLog();
      engine.db.prepare('DELETE FROM es_events WHERE position = ?').run(position);
      expectFailure(engine, position, 'position_gap', 5);
    }
  });
});

describe('verify after swapping the contents of two rows', () => {
  it('fails at the lower of the two positions with broken_link, for every pair', () => {
    for (const i of POSITIONS) {
      for (const j of POSITIONS.filter((p) => p > i)) {
        const engine = buildLog();
        const before = [rawRow(engine.db, i), rawRow(engine.db, j)];
        swapRows(engine.db, i, j);
        assert.equal(rawRow(engine.db, i).hash, before[1]!.hash, `rows ${i} and ${j} were swapped`);
        assert.equal(rawRow(engine.db, j).hash, before[0]!.hash);
        const result = engine.verify();
        assert.ok(!result.ok, `swap ${i}↔${j} must fail`);
        assert.deepEqual([result.position, result.reason], [i, 'broken_link'], `swap ${i}↔${j}: ${result.message}`);
      }
    }
  });
});

describe('verify against an attacker who re-hashes the chain', () => {
  it('catches a version that breaks its stream sequence under a valid chain and head', () => {
    const engine = buildLog();
    setColumn(engine.db, 4, 'version', 102); // card-1: 1, 102, 3, 4, 5
    rehashFrom(engine.db, 4);
    expectFailure(engine, 4, 'bad_version_sequence');
  });

  it('catches two versions of a stream exchanged under a valid chain and head', () => {
    const engine = buildLog();
    setColumn(engine.db, 4, 'version', 99);
    setColumn(engine.db, 6, 'version', 2);
    setColumn(engine.db, 4, 'version', 3); // card-1 now reads 1, 3, 2, 4, 5
    rehashFrom(engine.db, 4);
    expectFailure(engine, 4, 'bad_version_sequence');
  });

  it('catches a version jump at the end of a stream under a valid chain and head', () => {
    const engine = buildLog();
    setColumn(engine.db, 12, 'version', 7); // card-1: …, 4, 7
    rehashFrom(engine.db, 12);
    expectFailure(engine, 12, 'bad_version_sequence');
  });

  it('passes a fully re-hashed chain on its own, but fails it against the head an auditor recorded', () => {
    const engine = buildLog();
    const recorded = engine.verify();
    assert.ok(recorded.ok);
    setColumn(engine.db, 5, 'data', flip(rawRow(engine.db, 5).data, firstStringValue(rawRow(engine.db, 5).data)));
    rehashFrom(engine.db, 5);
    assert.equal(engine.verify().ok, true, 'a keyless chain cannot catch a full re-hash without an outside anchor');
    const result = engine.verify({ expectHead: recorded.head });
    assert.deepEqual(
      [result.ok, !result.ok && result.position, !result.ok && result.reason],
      [false, EVENTS, 'head_mismatch'],
    );
  });

  it('fails when the recorded head lies beyond the end of the log', () => {
    const engine = buildLog();
    const result = engine.verify({ expectHead: { position: EVENTS + 5, hash: 'f'.repeat(64) } });
    assert.deepEqual(
      [result.ok, !result.ok && result.position, !result.ok && result.reason],
      [false, EVENTS + 1, 'head_mismatch'],
    );
  });

  it('fails with head_mismatch when the recorded log end no longer matches the log', () => {
    const ahead = buildLog();
    ahead.db.prepare(`UPDATE es_projections SET position = ? WHERE name = '$log'`).run(EVENTS + 1);
    expectFailure(ahead, EVENTS + 1, 'head_mismatch');

    const behind = buildLog();
    behind.db.prepare(`UPDATE es_projections SET position = ? WHERE name = '$log'`).run(EVENTS - 2);
    expectFailure(behind, EVENTS - 1, 'head_mismatch');
  });

  it('names a correctly chained row appended without a command', () => {
    const engine = buildLog();
    const last = rawRow(engine.db, EVENTS);
    const { position: _p, prev_hash: _h, hash: _x, ...fields } = last;
    const forged = chainRow(
      { ...fields, version: last.version + 1, type: 'CardCommented', data: '{"cardId":1,"text":"forged"}' },
      last,
    );
    engine.db
      .prepare(`INSERT INTO es_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(...EVENT_COLUMNS.split(', ').map((c) => forged[c as keyof EventRow]));
    expectFailure(engine, EVENTS + 1, 'head_mismatch');
  });
});
