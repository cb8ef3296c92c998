import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Decider } from '../../src/engine/decider.js';
import type { Engine } from '../../src/engine/engine.js';
import { ConcurrencyError } from '../../src/errors.js';
import type { StoredEvent } from '../../src/engine/event.js';
import type { Projection } from '../../src/engine/projection.js';
import { run } from '../../src/engine/projection-sql.js';
import { getCard } from '../../testkit/card-projections.js';
import { cardDecider, cardStream, type Card, type CardCommand, type CardEvent } from '../../testkit/cards.js';
import { dumpTables, openCard, PROJECTED_TABLES, runCard, testEngine, TEST_PROJECTIONS } from '../helpers/engine.js';

const EMPTY = { cards: [], card_columns: [], streams: [] };
const sequences = (engine: Engine) => engine.db.prepare('SELECT name, value FROM es_sequences ORDER BY name').all();
const metaOf = (engine: Engine) =>
  (engine.db.prepare('SELECT meta FROM es_events ORDER BY position').all() as { meta: string }[]).map((r) =>
    JSON.parse(r.meta),
  );

/** The card decider, counting its decide calls. */
function spyDecider(): Decider<Card, CardCommand, CardEvent> & { calls: number } {
  const spy = {
    ...cardDecider,
    calls: 0,
    decide: (c: CardCommand, s: Card, ctx: Parameters<typeof cardDecider.decide>[2]) => {
      spy.calls += 1;
      return cardDecider.decide(c, s, ctx);
    },
  };
  return spy;
}

/** A buggy projection: it writes, then throws on comments. Registered after the card projections. */
const bomb: Projection<CardEvent, 'bomb_log'> = {
  name: 'bomb',
  version: 1,
  handles: ['CardCommented'],
  tables: ['bomb_log'],
  init: (t) => `CREATE TABLE IF NOT EXISTS "${t.bomb_log}" (position INTEGER PRIMARY KEY)`,
  *apply(e, t) {
    yield run(`INSERT INTO "${t.bomb_log}" (position) VALUES (?)`, e.position);
    throw new Error(`bomb projection failed on ${e.type}`);
  },
};

describe('handle and transact', () => {
  let engine: Engine;
  let published: StoredEvent[];
  beforeEach(() => {
    engine = testEngine();
    published = [];
    engine.bus.events$.subscribe((e) => published.push(e));
  });
  afterEach(() => engine.close());

  it('a domain error rolls the whole command back: no events, no rows, no id consumed, nothing published', () => {
    assert.throws(
      () =>
        engine.transact({ actor: 'alice', commandId: 'doomed' }, (uow) => {
          const a = uow.ids.next('card');
          engine.handle(
            cardDecider,
            cardStream(a),
            { type: 'OpenCard', cardId: a, title: 'Opened then undone', column: 'todo' },
            { actor: 'alice' },
          );
          runCard(engine, a, { type: 'CommentCard', text: 'also undone' });
          runCard(engine, 404, { type: 'MoveCard', to: 'doing' }); // ErrNotFound
        }),
      { code: 'ErrNotFound' },
    );
    assert.deepEqual(engine.head(), { position: 0, hash: '0'.repeat(64) });
    assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), EMPTY);
    assert.deepEqual(sequences(engine), []);
    assert.deepEqual(published, []);
    assert.equal(
      openCard(engine, 'The first real card', 'todo', 'doomed'),
      1,
      'the id and the command id are free again',
    );
    assert.equal(published.length, 1);
  });

  it('expectedVersion mismatch is ErrConcurrency, raised before deciding', () => {
    const decider = spyDecider();
    const id = openCard(engine, 'Versioned card');
    const head = engine.head();
    const move = { type: 'MoveCard', to: 'doing' } as const;
    for (const expectedVersion of [2, 0, 'no_stream'] as const) {
      assert.throws(
        () => engine.handle(decider, cardStream(id), move, { actor: 'alice', expectedVersion }),
        (e: unknown) => {
          assert.ok(e instanceof ConcurrencyError);
          assert.equal(e.code, 'ErrConcurrency');
          assert.deepEqual(e.details, { streamId: cardStream(id), expected: expectedVersion, actual: 1 });
          return true;
        },
      );
    }
    assert.equal(decider.calls, 0);
    assert.deepEqual(engine.head(), head);
    const ok = engine.handle(decider, cardStream(id), move, { actor: 'alice', expectedVersion: 1 });
    assert.equal(ok.version, 2);
    assert.equal(decider.calls, 1);
    assert.throws(() => engine.handle(decider, cardStream(77), move, { actor: 'alice', expectedVersion: 1 }), {
      code: 'ErrConcurrency',
    });
  });

  it('decide returning [] appends nothing and returns the current state and version', () => {
    const id = openCard(engine, 'Stays put');
    runCard(engine, id, { type: 'CommentCard', text: 'one' });
    const before = { head: engine.head(), rows: dumpTables(engine.db, PROJECTED_TABLES) };
    published.length = 0;
    const result = runCard(engine, id, { type: 'MoveCard', to: 'todo' }, 'no-op');
    assert.deepEqual(result, {
      events: [],
      state: { status: 'open', cardId: id, column: 'todo', comments: 1 },
      version: 2,
      duplicate: false,
    });
    assert.deepEqual({ head: engine.head(), rows: dumpTables(engine.db, PROJECTED_TABLES) }, before);
    assert.deepEqual(published, []);
  });

  it('ids from uow.ids are gap-free across commands and not reused after a rollback', () => {
    assert.equal(openCard(engine, 'Card one'), 1);
    assert.equal(openCard(engine, 'Card two'), 2);
    assert.throws(() => openCard(engine, 'no'), { code: 'ErrInvalidInput' }); // took 3, then refused
    assert.throws(() =>
      engine.transact({ actor: 'alice' }, (uow) => {
        assert.deepEqual([uow.ids.next('card'), uow.ids.next('card'), uow.ids.next('lane')], [3, 4, 1]);
        throw new Error('changed my mind');
      }),
    );
    assert.deepEqual(sequences(engine), [{ name: 'card', value: 2 }]);
    const [three, four] = engine.transact({ actor: 'alice' }, (uow) => [
      uow.ids.next('card'),
      uow.ids.next('card'),
    ]).value!;
    assert.deepEqual([three, four, openCard(engine, 'Card five')], [3, 4, 5]);
    assert.deepEqual(sequences(engine), [{ name: 'card', value: 5 }]);
  });

  it('ids taken inside a nested command that rolled back are not skipped by the outer one', () => {
    const id = engine.transact({ actor: 'alice' }, () => {
      assert.throws(() => openCard(engine, 'no'), { code: 'ErrInvalidInput' });
      return openCard(engine, 'Opened after a refused inner command');
    }).value;
    assert.equal(id, 1);
  });

  it('a projection that throws fails the command and leaves no events and no rows', () => {
    engine.close();
    engine = testEngine({ projections: [...TEST_PROJECTIONS, bomb] });
    const id = openCard(engine, 'Bombed card');
    const before = { head: engine.head(), rows: dumpTables(engine.db, [...PROJECTED_TABLES, 'bomb_log']) };
    assert.throws(
      () => runCard(engine, id, { type: 'CommentCard', text: 'boom' }, 'bombed'),
      /bomb projection failed on CardCommented/,
    );
    assert.throws(
      () =>
        engine.transact({ actor: 'alice' }, () => {
          runCard(engine, id, { type: 'MoveCard', to: 'doing' });
          runCard(engine, id, { type: 'CommentCard', text: 'boom' });
        }),
      /bomb projection failed/,
    );
    assert.deepEqual({ head: engine.head(), rows: dumpTables(engine.db, [...PROJECTED_TABLES, 'bomb_log']) }, before);
    assert.equal(getCard(engine.db, id)?.comments, 0);
    assert.equal(
      runCard(engine, id, { type: 'MoveCard', to: 'doing' }, 'bombed').version,
      2,
      'the command id was not consumed',
    );
    assert.equal(engine.verify().ok, true);
  });

  it('nested transact: inner handle calls share the outer command meta', () => {
    const outer = { actor: 'alice', commandId: 'outer-1', causationId: 'cause-1', correlationId: 'corr-1' };
    let inner: ReturnType<typeof runCard> | undefined;
    const result = engine.transact(outer, () => {
      const a = openCard(engine, 'Nested card A', 'todo', 'inner-open-a');
      const b = openCard(engine, 'Nested card B', 'todo', 'inner-open-b');
      inner = engine.handle(
        cardDecider,
        cardStream(a),
        { type: 'FinishCard', reason: 'quick' },
        { actor: 'mallory', commandId: 'inner-finish' },
      );
      return [a, b];
    });
    assert.deepEqual(result.value, [1, 2]);
    assert.equal(result.events.length, 4);
    assert.deepEqual(
      inner?.events.map((e) => e.type),
      ['CardMoved', 'CardClosed'],
      'an inner result holds only its own events',
    );
    const meta = { actor: 'alice', commandId: 'outer-1', causationId: 'cause-1', correlationId: 'corr-1' };
    assert.deepEqual(
      result.events.map((e) => e.meta),
      Array(4).fill(meta),
    );
    assert.deepEqual(metaOf(engine), Array(4).fill(meta));
    assert.deepEqual(
      published.map((e) => e.position),
      [1, 2, 3, 4],
      'published once, after the outer commit',
    );
    // The inner command ids were never recorded: running one again at top level is a new command.
    assert.equal(runCard(engine, 2, { type: 'FinishCard', reason: 'again' }, 'inner-finish').duplicate, false);
  });

  it('a caught failure of a nested command rolls back only that command', () => {
    const result = engine.transact({ actor: 'alice', commandId: 'partial' }, () => {
      const a = openCard(engine, 'Kept card');
      assert.throws(
        () =>
          engine.transact({ actor: 'alice' }, () => {
            runCard(engine, a, { type: 'CommentCard', text: 'undone with its savepoint' });
            runCard(engine, a, { type: 'CommentCard', text: '' });
          }),
        { code: 'ErrInvalidInput' },
      );
      runCard(engine, a, { type: 'MoveCard', to: 'doing' });
      return a;
    });
    assert.deepEqual(
      result.events.map((e) => [e.position, e.type]),
      [
        [1, 'CardOpened'],
        [2, 'CardMoved'],
      ],
    );
    assert.deepEqual(getCard(engine.db, result.value!)?.comments, 0);
    const rows = dumpTables(engine.db, PROJECTED_TABLES);
    engine.rebuild();
    assert.deepEqual(dumpTables(engine.db, PROJECTED_TABLES), rows);
  });

  it('a duplicate command id returns the original events and the state after them', () => {
    const decider = spyDecider();
    const id = openCard(engine, 'Duplicated card');
    const first = engine.handle(
      decider,
      cardStream(id),
      { type: 'MoveCard', to: 'doing' },
      { actor: 'alice', commandId: 'move-1' },
    );
    runCard(engine, id, { type: 'CommentCard', text: 'later' });
    const head = engine.head();
    published.length = 0;
    const calls = decider.calls;
    const again = engine.handle(
      decider,
      cardStream(id),
      { type: 'CommentCard', text: 'different' },
      { actor: 'bob', commandId: 'move-1' },
    );
    assert.deepEqual(again, { ...first, duplicate: true });
    assert.deepEqual(again.state, { status: 'open', cardId: id, column: 'doing', comments: 0 });
    assert.equal(decider.calls, calls, 'a duplicate is not decided again');
    assert.deepEqual(engine.head(), head);
    assert.deepEqual(published, [], 'a duplicate is not published again');

    const finished = runCard(engine, id, { type: 'FinishCard', reason: 'done' }, 'finish-1');
    const finishedAgain = runCard(engine, id, { type: 'FinishCard', reason: 'done' }, 'finish-1');
    assert.deepEqual(finishedAgain, { ...finished, duplicate: true });
    assert.equal(finishedAgain.events.length, 2);
  });

  it('a duplicate of a multi-stream command returns all its events, and through handle the state of that stream', () => {
    const a = openCard(engine, 'Card alpha');
    const b = openCard(engine, 'Card beta');
    const batch = () =>
      engine.transact({ actor: 'alice', commandId: 'batch-1' }, () => {
        runCard(engine, a, { type: 'MoveCard', to: 'doing' });
        runCard(engine, b, { type: 'CommentCard', text: 'from the batch' });
        return 'ran';
      });
    const first = batch();
    runCard(engine, b, { type: 'CommentCard', text: 'after the batch' });
    const again = batch();
    assert.deepEqual(again, { events: first.events, value: undefined, duplicate: true });
    const viaHandle = runCard(engine, b, { type: 'CommentCard', text: 'ignored' }, 'batch-1');
    assert.deepEqual(viaHandle.events, first.events);
    assert.deepEqual(
      [viaHandle.state, viaHandle.version],
      [{ status: 'open', cardId: b, column: 'todo', comments: 1 }, 2],
    );
    assert.equal(engine.head().position, 5);
  });
});
