import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { canonicalize } from '../../src/canonical.js';
import type { Decider } from '../../src/engine/decider.js';
import { migrate, openDatabase } from '../../src/engine/db.js';
import { Engine } from '../../src/engine/engine.js';
import type { EventRow, StoredEvent } from '../../src/engine/event.js';
import { engineMigrations } from '../../src/engine/schema.js';
import { eventsOfCommand, importRows } from '../../src/engine/command-log.js';
import { iterateAll, readAll, readStream } from '../../src/engine/store.js';
import { currentSchemaVersion, registerUpcaster, upcast } from '../../src/engine/upcasters.js';
import { getCard } from '../../testkit/card-projections.js';
import { cardOpenedV1toV2, cardStream, type Card, type CardCommand, type CardEvent } from '../../testkit/cards.js';
import { runCard, testEngine, TEST_PROJECTIONS } from '../helpers/engine.js';
import { append, chainRow, ev, rawRow, storeDb } from '../helpers/event-log.js';
import { tempDir } from '../../testkit/temp-dir.js';

/** CardOpened as a release before `priority` existed wrote it: schema_version 1, no priority. */
const LEGACY_DATA = { cardId: 1, title: 'Legacy card', column: 'todo' };
const LEGACY_COMMAND = 'legacy-open-1';

function legacyRow(): EventRow {
  return chainRow({
    stream_id: cardStream(1),
    version: 1,
    type: 'CardOpened',
    schema_version: 1,
    data: canonicalize(LEGACY_DATA),
    meta: canonicalize({ commandId: LEGACY_COMMAND, actor: 'old-release', causationId: null, correlationId: null }),
    recorded_at: '2025-06-01T00:00:00.000Z',
  });
}

/** An engine whose log starts with the legacy row (imported: projected and chain-checked). */
function legacyEngine(): { engine: Engine; row: EventRow } {
  const engine = testEngine();
  const row = legacyRow();
  engine.importRows([row]);
  return { engine, row };
}

const V2_DATA = { ...LEGACY_DATA, priority: 'normal' };

function assertUpcast(e: StoredEvent | undefined): void {
  assert.ok(e, 'the legacy event was read');
  assert.equal(e.type, 'CardOpened');
  assert.equal(e.schemaVersion, 2);
  assert.deepEqual(e.data, V2_DATA);
  assert.equal(e.position, 1);
}

describe('CardOpened v1 → v2 on every read path', () => {
  it('is upcast by readStream', () => {
    assertUpcast(readStream(legacyEngine().engine.db, cardStream(1))[0]);
  });

  it('is upcast by readAll', () => {
    assertUpcast(readAll(legacyEngine().engine.db)[0]);
  });

  it('is upcast by iterateAll', () => {
    assertUpcast([...iterateAll(legacyEngine().engine.db, { limit: 1 })][0]);
  });

  it('is upcast by eventsOfCommand', () => {
    const events = eventsOfCommand(legacyEngine().engine.db, LEGACY_COMMAND);
    assert.equal(events.length, 1);
    assertUpcast(events[0]);
  });

  it('is upcast in what importRows returns and publishes', () => {
    const engine = testEngine();
    const seen: StoredEvent[] = [];
    engine.bus.events$.subscribe((e) => seen.push(e));
    assertUpcast(engine.importRows([legacyRow()])[0]);
    assertUpcast(seen[0]);
  });

  it('is upcast for a duplicate of the legacy command id', () => {
    const { engine } = legacyEngine();
    const retry = engine.transact({ actor: 'tester', commandId: LEGACY_COMMAND }, () => assert.fail('must not run'));
    assert.equal(retry.duplicate, true);
    assertUpcast(retry.events[0]);
  });

  it("is upcast in engine.handle's state load: a later command sees v2 state", () => {
    const { engine } = legacyEngine();
    // A decider whose state keeps the opened card's data, to see exactly what the load folded.
    type Seen = { opened: Record<string, unknown> | null };
    const probe: Decider<Seen, CardCommand, CardEvent> = {
      initialState: () => ({ opened: null }),
      evolve: (s, e) => (e.type === 'CardOpened' ? { opened: { ...e.data } } : s),
      decide: (_c, s) => [
        { type: 'CardCommented', data: { cardId: 1, text: `priority=${String(s.opened?.priority)}` } },
      ],
    };
    const probed = engine.handle(probe, cardStream(1), { type: 'CommentCard', text: 'x' }, { actor: 'tester' });
    assert.deepEqual(probed.state.opened, V2_DATA);
    assert.deepEqual(readStream(engine.db, cardStream(1))[1]!.data, { cardId: 1, text: 'priority=normal' });

    const moved = runCard(engine, 1, { type: 'MoveCard', to: 'doing' });
    assert.deepEqual(moved.state, { status: 'open', cardId: 1, column: 'doing', comments: 1 } satisfies Card);
    assert.deepEqual(
      moved.events.map((e) => e.data),
      [{ cardId: 1, from: 'todo', to: 'doing' }],
    );
  });

  it('is upcast by the inline projection of an import', () => {
    const { engine } = legacyEngine();
    assert.equal(getCard(engine.db, 1)?.priority, 'normal');
  });

  it('is upcast by engine.rebuild(): the cards table gets priority normal', () => {
    const engine = testEngine();
    // Store-level import: the log has the row, the read tables do not, until the rebuild.
    engine.db.transaction(() => importRows(engine.db, [legacyRow()], '2026-01-01T00:00:00.000Z')).immediate();
    assert.equal(getCard(engine.db, 1), null);
    engine.rebuild();
    const card = getCard(engine.db, 1);
    assert.equal(card?.priority, 'normal');
    assert.equal(card?.title, 'Legacy card');
    assert.equal(card?.column_name, 'todo');
  });

  it('is upcast by the start-up rebuild of a database an old release left behind', () => {
    const tmp = tempDir();
    try {
      const file = join(tmp.dir, 'old.db');
      const old = openDatabase(file);
      migrate(old, engineMigrations);
      old.transaction(() => importRows(old, [legacyRow()], '2026-01-01T00:00:00.000Z')).immediate();
      old.close();
      const engine = Engine.open({ file, projections: TEST_PROJECTIONS });
      try {
        assert.ok(engine.startupRebuild, 'the new projections were built from the log');
        assert.equal(getCard(engine.db, 1)?.priority, 'normal');
      } finally {
        engine.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  it('never rewrites the stored row: raw data, schema_version and hash are unchanged and verify passes', () => {
    const { engine, row } = legacyEngine();
    readStream(engine.db, cardStream(1));
    readAll(engine.db);
    runCard(engine, 1, { type: 'MoveCard', to: 'doing' });
    engine.rebuild();
    assert.deepEqual(rawRow(engine.db, 1), row);
    assert.equal(rawRow(engine.db, 1).data, '{"cardId":1,"column":"todo","title":"Legacy card"}');
    assert.equal(rawRow(engine.db, 1).schema_version, 1);
    assert.deepEqual(engine.verify(), { ok: true, events: 2, head: engine.head() });
  });

  it('writes new CardOpened events with schema_version 2 and reads them back unchanged', () => {
    const { engine } = legacyEngine();
    assert.equal(currentSchemaVersion('CardOpened'), 2);
    const opened = runCard(engine, 2, {
      type: 'OpenCard',
      cardId: 2,
      title: 'Modern card',
      column: 'todo',
      priority: 'high',
    });
    const row = rawRow(engine.db, opened.events[0]!.position);
    assert.equal(row.schema_version, 2);
    assert.deepEqual(JSON.parse(row.data), { cardId: 2, title: 'Modern card', column: 'todo', priority: 'high' });
    assert.deepEqual(readStream(engine.db, cardStream(2))[0]!.data, JSON.parse(row.data));
    assert.equal(getCard(engine.db, 2)?.priority, 'high');
  });

  it('keeps a priority a v1 row happened to carry (the upcaster only fills a default)', () => {
    assert.deepEqual(upcast('CardOpened', 1, { ...LEGACY_DATA, priority: 'low' }), {
      schemaVersion: 2,
      data: { ...LEGACY_DATA, priority: 'low' },
    });
  });
});

describe('registerUpcaster', () => {
  it('rejects a second, different upcaster for the same (type, from)', () => {
    const other = { type: 'CardOpened', from: 1, upcast: (d: unknown) => ({ ...(d as object), priority: 'high' }) };
    assert.throws(() => registerUpcaster(other), /an upcaster for CardOpened@1 is already registered/);
    assert.deepEqual(upcast('CardOpened', 1, LEGACY_DATA).data, V2_DATA, 'the first one still applies');
    assert.equal(currentSchemaVersion('CardOpened'), 2);
  });

  it('accepts the same upcaster registered again (a module imported twice)', () => {
    assert.doesNotThrow(() => registerUpcaster(cardOpenedV1toV2));
    assert.equal(currentSchemaVersion('CardOpened'), 2);
  });

  it('writes types without upcasters at schema version 1 and leaves their data alone', () => {
    const db = storeDb();
    const [e] = append(db, 'plain-1', 'no_stream', [ev('NeverUpcast', { a: 1 })]);
    assert.equal(currentSchemaVersion('NeverUpcast'), 1);
    assert.equal(e!.schemaVersion, 1);
    assert.deepEqual(upcast('NeverUpcast', 1, { a: 1 }), { schemaVersion: 1, data: { a: 1 } });
  });

  it('runs chains in order, v1 → v2 → v3, on read and writes new events at v3', () => {
    const type = 'ChainProbe';
    const calls: string[] = [];
    registerUpcaster({
      type,
      from: 2,
      upcast: (d) => {
        calls.push('2→3');
        const { name, ...rest } = d as { name: string; size: string };
        return { ...rest, label: name.toUpperCase() };
      },
    });
    registerUpcaster({
      type,
      from: 1,
      upcast: (d) => {
        calls.push('1→2');
        return { ...(d as object), size: 'm' };
      },
    });
    assert.equal(currentSchemaVersion(type), 3);

    const db = storeDb();
    const base = {
      type,
      meta: '{"actor":"tester","causationId":null,"commandId":"probe-import","correlationId":null}',
      recorded_at: '2025-01-01T00:00:00.000Z',
    };
    const v1 = chainRow({ ...base, stream_id: 'probe-1', version: 1, schema_version: 1, data: '{"name":"one"}' });
    const v2 = chainRow(
      { ...base, stream_id: 'probe-1', version: 2, schema_version: 2, data: '{"name":"two","size":"s"}' },
      v1,
    );
    db.transaction(() => importRows(db, [v1, v2], '2026-01-01T00:00:00.000Z')).immediate();
    calls.length = 0; // importRows returns upcast events too

    const [e1, e2] = readStream(db, 'probe-1');
    assert.deepEqual(calls, ['1→2', '2→3', '2→3']);
    assert.deepEqual([e1!.schemaVersion, e1!.data], [3, { size: 'm', label: 'ONE' }]);
    assert.deepEqual([e2!.schemaVersion, e2!.data], [3, { size: 's', label: 'TWO' }]);

    const [e3] = append(db, 'probe-1', 2, [ev(type, { size: 'l', label: 'THREE' })]);
    assert.equal(rawRow(db, e3!.position).schema_version, 3);
    assert.deepEqual(readStream(db, 'probe-1', { from: 3 })[0]!.data, { size: 'l', label: 'THREE' });
    assert.equal(calls.length, 3, 'a v3 event goes through no upcaster');
  });
});
