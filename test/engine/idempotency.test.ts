import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredEvent } from '../../src/engine/event.js';
import type { Engine } from '../../src/engine/engine.js';
import { cardDecider, cardStream } from '../../testkit/cards.js';
import { getCard } from '../../testkit/card-projections.js';
import { openCard, runCard, testEngine } from '../helpers/engine.js';
import { countEvents, rawRows } from '../helpers/event-log.js';

/** Everything a retry must leave untouched. */
const snapshot = (engine: Engine) => ({
  rows: rawRows(engine.db),
  head: engine.head(),
  sequences: engine.db.prepare('SELECT * FROM es_sequences ORDER BY name').all(),
  cards: engine.db.prepare('SELECT * FROM cards ORDER BY card_id').all(),
});

function published(engine: Engine): StoredEvent[] {
  const seen: StoredEvent[] = [];
  engine.bus.events$.subscribe((e) => seen.push(e));
  return seen;
}

describe('idempotency through engine.handle', () => {
  it('returns the first run for a retried command id: duplicate, same events, same state, nothing appended', () => {
    const engine = testEngine();
    const seen = published(engine);
    const first = runCard(
      engine,
      1,
      { type: 'OpenCard', cardId: 1, title: 'Idempotent card', column: 'todo' },
      'cmd-open-1',
    );
    const before = snapshot(engine);
    const retry = runCard(
      engine,
      1,
      { type: 'OpenCard', cardId: 1, title: 'Idempotent card', column: 'todo' },
      'cmd-open-1',
    );
    assert.equal(first.duplicate, false);
    assert.equal(retry.duplicate, true);
    assert.deepEqual(retry.events, first.events);
    assert.deepEqual(
      retry.events.map((e) => e.position),
      [1],
    );
    assert.deepEqual(retry.state, first.state);
    assert.equal(retry.version, first.version);
    assert.deepEqual(snapshot(engine), before);
    assert.deepEqual(
      seen.map((e) => e.position),
      [1],
      'the bus published the event once',
    );
  });

  it('returns the state right after the original events, not the current one', () => {
    const engine = testEngine();
    runCard(engine, 1, { type: 'OpenCard', cardId: 1, title: 'Moving card', column: 'todo' }, 'cmd-open');
    const move = runCard(engine, 1, { type: 'MoveCard', to: 'doing' }, 'cmd-move');
    runCard(engine, 1, { type: 'CommentCard', text: 'later' }, 'cmd-comment');
    runCard(engine, 1, { type: 'MoveCard', to: 'review' }, 'cmd-move-2');
    const retry = runCard(engine, 1, { type: 'MoveCard', to: 'doing' }, 'cmd-move');
    assert.equal(retry.duplicate, true);
    assert.deepEqual(retry.state, { status: 'open', cardId: 1, column: 'doing', comments: 0 });
    assert.equal(retry.version, 2);
    assert.deepEqual(retry.events, move.events);
    assert.equal(getCard(engine.db, 1)!.column_name, 'review', 'the retry moved nothing');
  });

  it('returns the first result even when the retried command differs (the command id is the key)', () => {
    const engine = testEngine();
    runCard(engine, 1, { type: 'OpenCard', cardId: 1, title: 'Keyed card', column: 'todo' });
    const first = runCard(engine, 1, { type: 'MoveCard', to: 'doing' }, 'cmd-x');
    const retry = runCard(engine, 1, { type: 'CommentCard', text: 'different body' }, 'cmd-x');
    assert.equal(retry.duplicate, true);
    assert.deepEqual(retry.events, first.events);
    assert.equal(countEvents(engine.db), 2);
  });

  it('returns both events of a two-event command on retry', () => {
    const engine = testEngine();
    runCard(engine, 1, { type: 'OpenCard', cardId: 1, title: 'Finishing card', column: 'todo' });
    const first = runCard(engine, 1, { type: 'FinishCard', reason: 'shipped' }, 'cmd-finish');
    const retry = runCard(engine, 1, { type: 'FinishCard', reason: 'shipped' }, 'cmd-finish');
    assert.deepEqual(
      retry.events.map((e) => [e.position, e.type]),
      [
        [2, 'CardMoved'],
        [3, 'CardClosed'],
      ],
    );
    assert.deepEqual(retry.events, first.events);
    assert.deepEqual(retry.state, first.state);
  });

  it('runs a command id again when its first run failed and committed nothing', () => {
    const engine = testEngine();
    assert.throws(() => runCard(engine, 1, { type: 'MoveCard', to: 'doing' }, 'cmd-early'), { code: 'ErrNotFound' });
    runCard(engine, 1, { type: 'OpenCard', cardId: 1, title: 'Late card', column: 'todo' });
    const result = runCard(engine, 1, { type: 'MoveCard', to: 'doing' }, 'cmd-early');
    assert.equal(result.duplicate, false);
    assert.equal(result.events.length, 1);
  });

  it('appends nothing on the retry of a command that committed without events', () => {
    // Rule 5: a command id that already committed returns its first result and appends nothing — even
    // when that result was "nothing to do" and the stream has changed since.
    const engine = testEngine();
    runCard(engine, 1, { type: 'OpenCard', cardId: 1, title: 'No-op card', column: 'todo' });
    const first = runCard(engine, 1, { type: 'MoveCard', to: 'todo' }, 'cmd-noop');
    assert.deepEqual(first.events, []);
    runCard(engine, 1, { type: 'MoveCard', to: 'doing' }, 'cmd-other');
    const before = snapshot(engine);
    runCard(engine, 1, { type: 'MoveCard', to: 'todo' }, 'cmd-noop');
    assert.deepEqual(snapshot(engine), before);
    assert.equal(getCard(engine.db, 1)!.column_name, 'doing');
  });
});

describe('idempotency through engine.transact', () => {
  it('does not run the function again and returns the first events for a retried command id', () => {
    const engine = testEngine();
    const seen = published(engine);
    let runs = 0;
    const command = () =>
      engine.transact({ actor: 'tester', commandId: 'cmd-two-cards' }, (uow) => {
        runs += 1;
        for (const title of ['Card one', 'Card two']) {
          const cardId = uow.ids.next('card');
          engine.handle(
            cardDecider,
            cardStream(cardId),
            { type: 'OpenCard', cardId, title, column: 'todo' },
            { actor: 'tester' },
          );
        }
        return 'done';
      });
    const first = command();
    const before = snapshot(engine);
    const retry = command();
    assert.equal(runs, 1);
    assert.deepEqual(first, { events: first.events, value: 'done', duplicate: false });
    assert.equal(retry.duplicate, true);
    assert.equal(retry.value, undefined);
    assert.deepEqual(retry.events, first.events);
    assert.deepEqual(
      retry.events.map((e) => [e.position, e.streamId]),
      [
        [1, 'card-1'],
        [2, 'card-2'],
      ],
    );
    assert.deepEqual(snapshot(engine), before, 'no events, ids or projection rows');
    assert.deepEqual(
      seen.map((e) => e.position),
      [1, 2],
      'published once',
    );
  });

  it('gives every event of a command the same meta, which is what the retry finds it by', () => {
    const engine = testEngine();
    const first = engine.transact(
      { actor: 'alice', commandId: 'cmd-meta', correlationId: 'corr-1', causationId: 'cause-1' },
      () => {
        engine.handle(
          cardDecider,
          cardStream(1),
          { type: 'OpenCard', cardId: 1, title: 'Meta card', column: 'todo' },
          { actor: 'ignored', commandId: 'ignored' },
        );
        engine.handle(cardDecider, cardStream(1), { type: 'FinishCard', reason: 'r' }, { actor: 'ignored' });
      },
    );
    const expected = { commandId: 'cmd-meta', actor: 'alice', causationId: 'cause-1', correlationId: 'corr-1' };
    assert.equal(first.events.length, 3);
    for (const e of first.events) assert.deepEqual(e.meta, expected);
    for (const row of rawRows(engine.db)) assert.deepEqual(JSON.parse(row.meta), expected);
    assert.equal(engine.transact({ actor: 'alice', commandId: 'ignored' }, () => 1).duplicate, false);
    assert.deepEqual(engine.transact({ actor: 'bob', commandId: 'cmd-meta' }, () => 1).events, first.events);
  });

  it('makes openCard with the same command id return the same card without opening another', () => {
    const engine = testEngine();
    const a = openCard(engine, 'Only once', 'todo', 'cmd-open');
    const b = openCard(engine, 'Only once', 'todo', 'cmd-open');
    assert.equal(a, b);
    assert.equal(countEvents(engine.db), 1);
    assert.deepEqual(engine.db.prepare('SELECT value FROM es_sequences WHERE name = ?').get('card'), { value: 1 });
  });
});
