import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { fixedClock } from '../../src/clock.js';
import { Engine, type EngineOptions } from '../../src/engine/engine.js';
import type { AnyProjection, Projection } from '../../src/engine/projection.js';
import { run } from '../../src/engine/projection-sql.js';
import { countStreamsByKind, getStream, listStreams, streamsProjection } from '../../src/projections/streams.js';
import {
  cardColumnsProjection,
  cardsProjection,
  columnCounts,
  listCards,
  type CardRow,
} from '../../testkit/card-projections.js';
import { cardDecider, cardStream, type CardEvent } from '../../testkit/cards.js';
import { dumpTables, openCard, PROJECTED_TABLES, runCard, testEngine, TEST_PROJECTIONS } from '../helpers/engine.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { EFFECTIVE_POSITION } from '../../src/engine/projection-positions.js';

type Status = { name: string; version: number; position: number; rebuilt_at: string };
const status = (engine: Engine): Status[] =>
  engine.db
    .prepare(
      `SELECT p.name, p.version, ${EFFECTIVE_POSITION} AS position, p.rebuilt_at
         FROM es_projections p JOIN es_projections l ON l.name = '$log' WHERE p.name <> '$log' ORDER BY p.name`,
    )
    .all() as Status[];
const tableNames = (db: Engine['db']): string[] =>
  (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[]).map(
    (r) => r.name,
  );

/** The cards projection with new code: bumps the version and upper-cases titles (visibly different rows). */
const cardsV2: Projection<CardEvent, 'cards'> = {
  ...cardsProjection,
  version: 2,
  *apply(e, t) {
    yield* cardsProjection.apply(e, t);
    if (e.type === 'CardOpened')
      yield run(`UPDATE "${t.cards}" SET title = upper(title) WHERE card_id = ?`, e.data.cardId);
  },
};

/** Opens `n` cards, moves, comments and finishes each: 5 events per card. */
function fillBoard(engine: Engine, n: number): void {
  for (let i = 0; i < n; i++) {
    const id = openCard(engine, `Card number ${i + 1}`);
    runCard(engine, id, { type: 'MoveCard', to: 'doing' });
    runCard(engine, id, { type: 'CommentCard', text: `note ${i}` });
    if (i % 2 === 0) {
      runCard(engine, id, { type: 'FinishCard', reason: 'done' });
    } else {
      runCard(engine, id, { type: 'CommentCard', text: 'again' });
      runCard(engine, id, { type: 'MoveCard', to: 'review' });
    }
  }
}

describe('projection registry start-up (file database)', () => {
  let file: string;
  let cleanup: () => void;
  const opened: Engine[] = [];
  let day = 0; // each engine's clock starts a day after the previous one's, so rebuilt_at tells them apart
  const open = (projections: readonly AnyProjection[], extra: Partial<EngineOptions> = {}): Engine => {
    const clock = fixedClock(new Date(Date.UTC(2026, 0, 1) + day++ * 86_400_000), 1000);
    const engine = Engine.open({ file, clock, projections, ...extra });
    opened.push(engine);
    return engine;
  };

  beforeEach(() => {
    const tmp = tempDir('colony-registry-');
    file = join(tmp.dir, 'colony.db');
    cleanup = tmp.cleanup;
  });
  afterEach(() => {
    for (const e of opened.splice(0)) e.close();
    cleanup();
  });

  it('rebuilds a projection whose code version was bumped, and only that one', () => {
    const first = open(TEST_PROJECTIONS);
    fillBoard(first, 3);
    const before = status(first);
    const cardsBefore = listCards(first.db);
    first.close();

    const second = open([cardsV2, cardColumnsProjection, streamsProjection]);
    assert.deepEqual(second.startupRebuild?.projections, ['cards']);
    const head = second.head().position;
    const after = status(second);
    assert.deepEqual(after.find((s) => s.name === 'cards')?.version, 2);
    assert.equal(after.find((s) => s.name === 'cards')?.position, head);
    assert.notEqual(
      after.find((s) => s.name === 'cards')?.rebuilt_at,
      before.find((s) => s.name === 'cards')?.rebuilt_at,
    );
    assert.deepEqual(
      after.filter((s) => s.name !== 'cards'),
      before.filter((s) => s.name !== 'cards'),
    );
    assert.deepEqual(
      listCards(second.db),
      cardsBefore.map((c) => ({ ...c, title: c.title.toUpperCase() })),
    );
    second.close();

    assert.equal(open([cardsV2, cardColumnsProjection, streamsProjection]).startupRebuild, null);
  });

  it('builds a projection added later from the existing log', () => {
    const first = open([cardsProjection, streamsProjection]);
    fillBoard(first, 2);
    first.close();

    const second = open(TEST_PROJECTIONS);
    assert.deepEqual(second.startupRebuild?.projections, ['card_columns']);
    assert.equal(status(second).find((s) => s.name === 'card_columns')?.position, second.head().position);
    assert.deepEqual(columnCounts(second.db), [
      { column_name: 'doing', open_cards: 0, closed_cards: 0 },
      { column_name: 'done', open_cards: 0, closed_cards: 1 },
      { column_name: 'review', open_cards: 1, closed_cards: 0 },
      { column_name: 'todo', open_cards: 0, closed_cards: 0 },
    ]);
  });

  it('catches up a projection that lags because another engine appended without it', () => {
    const first = open(TEST_PROJECTIONS);
    fillBoard(first, 2);
    first.close();
    const without = open([streamsProjection]);
    fillBoard(without, 2); // cards 3 and 4: neither cards nor card_columns see them
    const head = without.head().position;
    without.close();

    const third = open(TEST_PROJECTIONS);
    assert.equal(third.startupRebuild, null);
    assert.deepEqual(
      status(third).map((s) => s.position),
      [head, head, head],
    );
    assert.deepEqual(
      listCards(third.db).map((c) => c.card_id),
      [1, 2, 3, 4],
    );
    const caughtUp = dumpTables(third.db, PROJECTED_TABLES);
    third.rebuild();
    assert.deepEqual(dumpTables(third.db, PROJECTED_TABLES), caughtUp);
  });

  it('catches up a projection that lagged while an engine having it stayed open', () => {
    const full = open(TEST_PROJECTIONS);
    openCard(full, 'Before the other engine');
    const without = open([streamsProjection]);
    without.handle(
      cardDecider,
      cardStream(50),
      { type: 'OpenCard', cardId: 50, title: 'Seen by streams only', column: 'todo' },
      { actor: 'x' },
    );
    openCard(full, 'After the other engine');
    full.close();
    without.close();
    const reopened = open(TEST_PROJECTIONS);
    assert.deepEqual(
      listCards(reopened.db).map((c) => c.card_id),
      [1, 2, 50],
    );
  });

  it('drops shadow tables a crashed rebuild left behind, on the next rebuild', () => {
    const engine = open(TEST_PROJECTIONS);
    fillBoard(engine, 1);
    engine.db.exec(`CREATE TABLE "cards__rebuild_deadbeef" (card_id INTEGER PRIMARY KEY, title TEXT);
      CREATE INDEX "cards__rebuild_deadbeef_by_title" ON "cards__rebuild_deadbeef" (title);
      CREATE TABLE "streams__rebuild_deadbeef" (stream_id TEXT PRIMARY KEY)`);
    const rows = dumpTables(engine.db, PROJECTED_TABLES);
    engine.rebuild(['streams']);
    assert.deepEqual(
      tableNames(engine.db).filter((t) => t.includes('__rebuild_')),
      [],
    );
    assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), rows);
  });

  it('refuses to rebuild an unknown projection, naming the known ones', () => {
    const engine = open(TEST_PROJECTIONS);
    assert.throws(() => engine.rebuild(['nope']), /unknown projection "nope" \(known: cards, card_columns, streams\)/);
    assert.throws(() => engine.rebuild(['cards', 'nope']), /"nope"/);
  });

  it('refuses two projections with the same name or the same table', () => {
    assert.throws(
      () => open([cardsProjection, { ...cardColumnsProjection, name: 'cards' }]),
      /two projections are named cards/,
    );
    assert.throws(
      () => open([cardsProjection, { ...cardColumnsProjection, tables: ['cards'] }]),
      /table cards is owned by two projections/,
    );
    assert.deepEqual(open(TEST_PROJECTIONS).startupRebuild?.projections, ['cards', 'card_columns', 'streams']);
  });

  it('readers on another connection see the old complete table until the swap, then the new one', () => {
    const writer = open(TEST_PROJECTIONS);
    fillBoard(writer, 10); // 50 events
    const reader = open(TEST_PROJECTIONS);
    const oldRows = listCards(reader.db);
    const raw = new BetterSqlite3(file, { readonly: true });
    try {
      const seen: { done: number; total: number; rows: CardRow[]; raw: unknown[] }[] = [];
      const rebuilder = open([cardsV2, cardColumnsProjection, streamsProjection], {
        rebuild: {
          pageSize: 5,
          onProgress: (done, total) =>
            seen.push({
              done,
              total,
              rows: listCards(reader.db),
              raw: raw.prepare('SELECT * FROM cards ORDER BY 1').all(),
            }),
        },
      });
      assert.ok(seen.length >= 10, `onProgress was called ${seen.length} times`);
      const newRows = oldRows.map((c) => ({ ...c, title: c.title.toUpperCase() }));
      seen.slice(0, -1).forEach((s, i) => {
        assert.deepEqual(s.rows, oldRows, `reader after page ${i} (${s.done}/${s.total})`);
        assert.deepEqual(s.raw, oldRows, `raw connection after page ${i}`);
      });
      assert.deepEqual(seen[seen.length - 1]!.rows, newRows);
      assert.deepEqual(listCards(reader.db), newRows);
      assert.deepEqual(listCards(rebuilder.db), newRows);
    } finally {
      raw.close();
    }
  });

  it('events appended by another connection during a rebuild are in the rebuilt tables', () => {
    const writer = open(TEST_PROJECTIONS);
    fillBoard(writer, 10);
    let appended = 0;
    const rebuilder = open([cardsV2, cardColumnsProjection, streamsProjection], {
      rebuild: {
        pageSize: 5,
        onProgress: (done, total) => {
          if (done >= total || appended >= 3) return;
          appended += 1;
          const id = openCard(writer, `opened during rebuild ${appended}`);
          runCard(writer, 2, { type: 'CommentCard', text: `while rebuilding ${appended}` });
          runCard(writer, id, { type: 'FinishCard', reason: 'quick' });
        },
      },
    });
    assert.equal(appended, 3);
    const head = rebuilder.head().position;
    assert.equal(head, 50 + 3 * 4);
    assert.equal(status(rebuilder).find((s) => s.name === 'cards')?.position, head);
    const cards = listCards(rebuilder.db);
    assert.deepEqual(
      cards.slice(10).map((c) => [c.card_id, c.title, c.status]),
      [
        [11, 'OPENED DURING REBUILD 1', 'closed'],
        [12, 'OPENED DURING REBUILD 2', 'closed'],
        [13, 'OPENED DURING REBUILD 3', 'closed'],
      ],
    );
    assert.equal(cards[1]!.comments, 2 + 3);
    assert.equal(cards[1]!.last_position, head - 2); // the last comment appended during the rebuild
    const incremental = dumpTables(rebuilder.db, PROJECTED_TABLES);
    rebuilder.rebuild();
    assert.deepEqual(dumpTables(rebuilder.db, PROJECTED_TABLES), incremental);
    assert.equal(rebuilder.verify().ok, true);
  });
});

describe('the streams projection query functions', () => {
  it('getStream, listStreams and countStreamsByKind read the catalog', () => {
    const engine = testEngine();
    try {
      const a = openCard(engine, 'First card');
      for (let i = 0; i < 10; i++) openCard(engine, `Card ${i + 2}`);
      runCard(engine, a, { type: 'FinishCard', reason: 'done' });
      engine.handle(
        cardDecider,
        'lane-7',
        { type: 'OpenCard', cardId: 99, title: 'Lane card', column: 'todo' },
        { actor: 'x' },
      );
      const head = engine.head().position;

      assert.deepEqual(getStream(engine.db, 'card-1'), {
        streamId: 'card-1',
        kind: 'card',
        version: 3,
        firstPosition: 1,
        lastPosition: head - 1,
        lastType: 'CardClosed',
        createdAt: '2026-01-01T00:00:01.000Z',
        updatedAt: '2026-01-01T00:00:12.000Z',
      });
      assert.equal(getStream(engine.db, 'card-404'), null);
      assert.equal(getStream(engine.db, 'lane-7')?.kind, 'lane');

      const cards = listStreams(engine.db, { kind: 'card' });
      assert.equal(cards.length, 11);
      assert.deepEqual(cards.map((s) => s.streamId).slice(0, 3), ['card-1', 'card-10', 'card-11']);
      assert.deepEqual(
        listStreams(engine.db, { kind: 'card', limit: 2 }).map((s) => s.streamId),
        ['card-1', 'card-10'],
      );
      assert.deepEqual(listStreams(engine.db, { kind: 'nothing' }), []);
      assert.equal(listStreams(engine.db).length, 12);
      assert.deepEqual(
        listStreams(engine.db, { limit: 1 }).map((s) => s.streamId),
        ['card-1'],
      );
      assert.deepEqual(countStreamsByKind(engine.db), { card: 11, lane: 1 });

      engine.rebuild(['streams']);
      assert.deepEqual(countStreamsByKind(engine.db), { card: 11, lane: 1 });
      assert.deepEqual(listStreams(engine.db, { kind: 'card' }), cards);
    } finally {
      engine.close();
    }
  });
});

describe('projections that read event meta', () => {
  const actorsOf = (readsMeta: boolean): Projection<CardEvent, 'card_actors'> => ({
    name: 'card_actors',
    version: 1,
    readsMeta,
    handles: ['CardOpened'],
    tables: ['card_actors'],
    init: (t) => `CREATE TABLE IF NOT EXISTS "${t.card_actors}" (card_id INTEGER PRIMARY KEY, actor TEXT NOT NULL)`,
    *apply(e, t) {
      yield run(`INSERT INTO "${t.card_actors}" VALUES (?, ?)`, e.data.cardId, e.meta.actor);
    },
  });

  it('get meta on a rebuild when they declare readsMeta', () => {
    const engine = testEngine({ projections: [actorsOf(true)] });
    openCard(engine, 'Opened by the tester');
    const before = dumpTables(engine.db, ['card_actors']);
    assert.deepEqual(before.card_actors, [{ card_id: 1, actor: 'tester' }]);
    engine.rebuild();
    assert.deepEqual(dumpTables(engine.db, ['card_actors']), before);
  });

  it('fail their rebuild loudly when they read meta without declaring it, leaving the live table intact', () => {
    const engine = testEngine({ projections: [actorsOf(false)] });
    openCard(engine, 'Opened by the tester'); // inline, meta is at hand
    assert.throws(() => engine.rebuild(), /must set readsMeta/);
    assert.deepEqual(dumpTables(engine.db, ['card_actors']).card_actors, [{ card_id: 1, actor: 'tester' }]);
  });
});
