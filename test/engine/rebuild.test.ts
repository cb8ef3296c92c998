import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { canonicalize } from '../../src/canonical.js';
import type { EventRow } from '../../src/engine/event.js';
import { GENESIS_HASH } from '../../src/engine/hash.js';
import { POSITIONS_SQL } from '../../src/engine/projection-positions.js';
import { builders, eventsFile, rowsFile, writeFixtures } from '../../fixtures/generate.js';
import { dumpTables, openCard, PROJECTED_TABLES, testEngine, TEST_PROJECTIONS } from '../helpers/engine.js';
import { tempDir } from '../../testkit/temp-dir.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures');
const names = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.events.json'))
  .map((f) => f.slice(0, -'.events.json'.length))
  .sort();

const readJson = (file: string): unknown => JSON.parse(readFileSync(join(FIXTURES, file), 'utf8'));
const load = (name: string) => ({
  events: readJson(eventsFile(name)) as EventRow[],
  rows: readJson(rowsFile(name)) as Record<string, unknown[]>,
});

/** The auditor's recipe from hash.ts, with a generic RFC 8785 canonicalizer instead of the fast path. */
function auditorHash(row: EventRow): string {
  const { hash: _hash, ...rest } = row;
  const canonical = canonicalize({
    data: JSON.parse(rest.data),
    meta: JSON.parse(rest.meta),
    position: rest.position,
    prevHash: rest.prev_hash,
    recordedAt: rest.recorded_at,
    schemaVersion: rest.schema_version,
    streamId: rest.stream_id,
    type: rest.type,
    version: rest.version,
  });
  return createHash('sha256').update(rest.prev_hash).update(canonical).digest('hex');
}

const projectionPositions = (engine: ReturnType<typeof testEngine>) =>
  engine.db.prepare(`SELECT name, version, position FROM (${POSITIONS_SQL}) ORDER BY name`).all();

describe('rebuild equivalence over every fixture', () => {
  it('finds at least the three scenarios of the generator', () => {
    assert.ok(names.length >= 3, `fixtures found: ${names.join(', ')}`);
    for (const build of builders) assert.ok(names.includes(build().name));
  });

  for (const name of names) {
    describe(name, () => {
      const { events, rows } = load(name);

      it('lists every projected table in rows.json', () => {
        assert.deepEqual(Object.keys(rows).sort(), [...PROJECTED_TABLES].sort());
        assert.ok(events.length > 0);
      });

      it('import (incremental apply) gives the expected rows', () => {
        const engine = testEngine();
        try {
          const stored = engine.importRows(events);
          assert.equal(stored.length, events.length);
          assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), rows);
          const head = events[events.length - 1]!;
          assert.deepEqual(engine.head(), { position: head.position, hash: head.hash });
          for (const p of projectionPositions(engine) as { position: number }[])
            assert.equal(p.position, head.position);
        } finally {
          engine.close();
        }
      });

      it('a full rebuild, then a paged one, then each projection alone give the same rows', () => {
        const engine = testEngine();
        try {
          engine.importRows(events);
          const report = engine.rebuild();
          assert.equal(report.events, events.length);
          assert.deepEqual(
            report.projections,
            TEST_PROJECTIONS.map((p) => p.name),
          );
          assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), rows);
          engine.rebuild([], { pageSize: 2 });
          assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), rows);
          for (const p of TEST_PROJECTIONS) {
            engine.rebuild([p.name], { pageSize: 3 });
            assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), rows, `after rebuilding ${p.name} alone`);
          }
          for (const p of projectionPositions(engine) as { position: number }[])
            assert.equal(p.position, events.length);
        } finally {
          engine.close();
        }
      });

      it('verifies, and its hashes are golden', () => {
        const engine = testEngine();
        try {
          engine.importRows(events);
          const last = events[events.length - 1]!;
          assert.deepEqual(engine.verify(), {
            ok: true,
            events: events.length,
            head: { position: last.position, hash: last.hash },
          });
          let prev = GENESIS_HASH;
          for (const row of events) {
            assert.equal(row.prev_hash, prev, `prev_hash of position ${row.position}`);
            assert.equal(auditorHash(row), row.hash, `hash of position ${row.position}`);
            prev = row.hash;
          }
          // Stored as they came: the import rewrote nothing (schema versions included).
          assert.deepEqual(engine.db.prepare('SELECT * FROM es_events ORDER BY position').all(), events);
        } finally {
          engine.close();
        }
      });
    });
  }

  it('the legacy fixture holds schema-1 CardOpened rows that read with the upcast priority', () => {
    const { events, rows } = load('legacy-upcast');
    const legacy = events.filter((e) => e.type === 'CardOpened' && e.schema_version === 1);
    assert.ok(legacy.length > 0);
    assert.ok(events.some((e) => e.type === 'CardOpened' && e.schema_version === 2));
    for (const row of legacy) {
      assert.equal('priority' in JSON.parse(row.data), false);
      const cardId = (JSON.parse(row.data) as { cardId: number }).cardId;
      const card = (rows.cards as { card_id: number; priority: string }[]).find((c) => c.card_id === cardId);
      assert.equal(card?.priority, 'normal');
    }
  });

  it('after importing a fixture, new ids continue after the imported ones', () => {
    const engine = testEngine();
    try {
      engine.importRows(load('board').events);
      assert.equal(openCard(engine, 'Opened after the restore'), 5);
    } finally {
      engine.close();
    }
  });

  it('an altered fixture row is refused by the import and nothing is kept', () => {
    const { events } = load('card-lifecycle');
    const tampered = events.map((e, i) => (i === 2 ? { ...e, data: e.data.replace('halfway', 'HALFWAY') } : e));
    const engine = testEngine();
    try {
      assert.throws(() => engine.importRows(tampered), { code: 'ErrChainMismatch' });
      assert.equal(engine.head().position, 0);
      assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), { cards: [], card_columns: [], streams: [] });
    } finally {
      engine.close();
    }
  });
});

describe('the fixture generator', () => {
  it('is deterministic: regenerating gives byte-identical files', () => {
    const { dir, cleanup } = tempDir('colony-fixtures-');
    try {
      const written = writeFixtures(dir).sort();
      const committed = readdirSync(FIXTURES)
        .filter((f) => f.endsWith('.json'))
        .sort();
      assert.deepEqual(written, committed);
      for (const file of written) {
        assert.equal(
          readFileSync(join(dir, file), 'utf8'),
          readFileSync(join(FIXTURES, file), 'utf8'),
          `${file} differs`,
        );
      }
    } finally {
      cleanup();
    }
  });

  it('builds the same fixture twice in one process', () => {
    for (const build of builders) assert.deepEqual(build(), build());
  });
});
