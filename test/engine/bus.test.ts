import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../src/engine/db.js';
import { Engine } from '../../src/engine/engine.js';
import { DomainError } from '../../src/errors.js';
import type { StoredEvent } from '../../src/engine/event.js';
import { readAll } from '../../src/engine/store.js';
import { cardDecider, cardStream } from '../../testkit/cards.js';
import { openCard, runCard, testEngine, TEST_PROJECTIONS } from '../helpers/engine.js';
import { countEvents, rawRows } from '../helpers/event-log.js';
import { tempDir } from '../../testkit/temp-dir.js';

function record(engine: Engine): StoredEvent[] {
  const seen: StoredEvent[] = [];
  engine.bus.events$.subscribe((e) => seen.push(e));
  return seen;
}

const positions = (events: readonly StoredEvent[]): number[] => events.map((e) => e.position);

/** Everything a rolled-back command must leave as it was. */
const state = (engine: Engine) => ({
  rows: rawRows(engine.db),
  head: engine.head(),
  sequences: engine.db.prepare('SELECT * FROM es_sequences ORDER BY name').all(),
  cards: engine.db.prepare('SELECT * FROM cards ORDER BY card_id').all(),
  streams: engine.db.prepare('SELECT * FROM streams ORDER BY stream_id').all(),
});

describe('EventBus publishing', () => {
  it('publishes every stored event once, in position order, equal to what the log holds', () => {
    const engine = testEngine();
    const seen = record(engine);
    const a = openCard(engine, 'Bus card A');
    const b = openCard(engine, 'Bus card B');
    runCard(engine, a, { type: 'FinishCard', reason: 'shipped' });
    runCard(engine, b, { type: 'CommentCard', text: 'hi' });
    assert.deepEqual(positions(seen), [1, 2, 3, 4, 5]);
    assert.deepEqual(seen, readAll(engine.db));
  });

  it('publishes only after commit: the subscriber runs outside the transaction and reads its own event', () => {
    const engine = testEngine();
    const checks: { inTransaction: boolean; type: string | undefined; stored: string }[] = [];
    engine.bus.events$.subscribe((e) => {
      const row = engine.db.prepare('SELECT type FROM es_events WHERE position = ?').get(e.position) as
        { type: string } | undefined;
      checks.push({ inTransaction: engine.db.inTransaction, type: row?.type, stored: e.type });
    });
    const a = openCard(engine, 'Committed card');
    runCard(engine, a, { type: 'FinishCard', reason: 'r' });
    assert.equal(checks.length, 3);
    for (const c of checks) assert.deepEqual(c, { inTransaction: false, type: c.stored, stored: c.stored });
  });

  it('publishes events another connection can already read (a file database)', () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'bus.db');
    const engine = Engine.open({ file, projections: TEST_PROJECTIONS });
    const other = openDatabase(file, { readonly: true });
    try {
      const found: (number | undefined)[] = [];
      engine.bus.events$.subscribe((e) => {
        const row = other.prepare('SELECT position FROM es_events WHERE position = ?').get(e.position) as
          { position: number } | undefined;
        found.push(row?.position);
      });
      const a = openCard(engine, 'Durable card');
      runCard(engine, a, { type: 'FinishCard', reason: 'r' });
      assert.deepEqual(found, [1, 2, 3]);
    } finally {
      other.close();
      engine.close();
      tmp.cleanup();
    }
  });

  it('publishes all events of a multi-stream command together after its one commit', () => {
    const engine = testEngine();
    const batches: number[][] = [];
    const current: number[] = [];
    engine.bus.events$.subscribe((e) => current.push(e.position));
    engine.transact({ actor: 'tester' }, (uow) => {
      for (const title of ['Batch one', 'Batch two', 'Batch three']) {
        const cardId = uow.ids.next('card');
        engine.handle(
          cardDecider,
          cardStream(cardId),
          { type: 'OpenCard', cardId, title, column: 'todo' },
          { actor: 'tester' },
        );
        batches.push([...current]); // nothing is published while the command is still open
      }
    });
    assert.deepEqual(batches, [[], [], []]);
    assert.deepEqual(current, [1, 2, 3]);
  });

  it('does not publish a duplicate command again', () => {
    const engine = testEngine();
    const seen = record(engine);
    openCard(engine, 'Once only', 'todo', 'cmd-once');
    openCard(engine, 'Once only', 'todo', 'cmd-once');
    runCard(engine, 1, { type: 'MoveCard', to: 'doing' }, 'cmd-move');
    runCard(engine, 1, { type: 'MoveCard', to: 'doing' }, 'cmd-move');
    assert.deepEqual(positions(seen), [1, 2]);
  });

  it('publishes nothing for a command that decides nothing', () => {
    const engine = testEngine();
    openCard(engine, 'Still card');
    const seen = record(engine);
    const result = runCard(engine, 1, { type: 'MoveCard', to: 'todo' });
    assert.deepEqual(result.events, []);
    assert.deepEqual(seen, []);
  });

  it('delivers events in position order to every subscriber even when a subscriber issues a command', () => {
    // The reactor turns outcomes into new commands from inside a subscription (rule 8).
    const engine = testEngine();
    const a = openCard(engine, 'Reacting card');
    engine.bus.events$.subscribe((e) => {
      if (e.type === 'CardMoved') openCard(engine, 'Follow-up card');
    });
    const seen = record(engine);
    runCard(engine, a, { type: 'FinishCard', reason: 'r' });
    assert.deepEqual(positions(seen), [2, 3, 4]);
  });
});

describe('EventBus and failed commands', () => {
  it('publishes nothing and leaves no rows when the decider refuses', () => {
    const engine = testEngine();
    const seen = record(engine);
    assert.throws(() => runCard(engine, 1, { type: 'MoveCard', to: 'doing' }), { code: 'ErrNotFound' });
    assert.throws(() => openCard(engine, 'no'), { code: 'ErrInvalidInput' });
    assert.deepEqual(seen, []);
    assert.equal(countEvents(engine.db), 0);
    assert.deepEqual(engine.head().position, 0);
  });

  it('publishes nothing and rolls everything back when transact throws after several handle() calls', () => {
    const engine = testEngine();
    openCard(engine, 'Existing card');
    const before = state(engine);
    const seen = record(engine);
    assert.throws(
      () =>
        engine.transact({ actor: 'tester' }, (uow) => {
          for (const title of ['Doomed one', 'Doomed two']) {
            const cardId = uow.ids.next('card');
            engine.handle(
              cardDecider,
              cardStream(cardId),
              { type: 'OpenCard', cardId, title, column: 'todo' },
              { actor: 'tester' },
            );
          }
          runCard(engine, 1, { type: 'FinishCard', reason: 'r' });
          assert.equal(countEvents(engine.db), 5, 'the appends happened inside the transaction');
          throw new DomainError('ErrLater', 'a check after the appends failed');
        }),
      { code: 'ErrLater' },
    );
    assert.deepEqual(seen, []);
    assert.deepEqual(state(engine), before, 'no rows, ids, head or projection changes');
    assert.equal(openCard(engine, 'Next card'), 2, 'the rolled-back ids are handed out again');
  });

  it('publishes only the surviving events of a nested transact whose inner call threw and was caught', () => {
    const engine = testEngine();
    const seen = record(engine);
    const result = engine.transact({ actor: 'tester' }, () => {
      runCard(engine, 1, { type: 'OpenCard', cardId: 1, title: 'Outer before', column: 'todo' });
      assert.throws(
        () =>
          engine.transact({ actor: 'tester' }, () => {
            runCard(engine, 2, { type: 'OpenCard', cardId: 2, title: 'Inner doomed', column: 'todo' });
            runCard(engine, 1, { type: 'MoveCard', to: 'inner' });
            throw new Error('inner failure');
          }),
        /inner failure/,
      );
      runCard(engine, 3, { type: 'OpenCard', cardId: 3, title: 'Outer after', column: 'todo' });
      assert.deepEqual(seen, [], 'nothing is published before the outer commit');
      return 'outer done';
    });
    assert.equal(result.value, 'outer done');
    assert.deepEqual(
      result.events.map((e) => [e.position, e.streamId]),
      [
        [1, 'card-1'],
        [2, 'card-3'],
      ],
    );
    assert.deepEqual(seen, result.events);
    assert.deepEqual(seen, readAll(engine.db), 'the log holds exactly what was published');
    assert.equal(engine.db.prepare('SELECT column_name FROM cards WHERE card_id = 1').pluck().get(), 'todo');
    assert.equal(engine.db.prepare('SELECT COUNT(*) FROM cards WHERE card_id = 2').pluck().get(), 0);
    assert.equal(engine.verify().ok, true);
  });

  it('publishes nothing when the outer transact throws after a nested one succeeded', () => {
    const engine = testEngine();
    const seen = record(engine);
    assert.throws(() =>
      engine.transact({ actor: 'tester' }, () => {
        engine.transact({ actor: 'tester' }, () =>
          runCard(engine, 1, { type: 'OpenCard', cardId: 1, title: 'Inner ok', column: 'todo' }),
        );
        throw new Error('outer failure');
      }),
    );
    assert.deepEqual(seen, []);
    assert.equal(countEvents(engine.db), 0);
  });

  it('publishes nothing for an import that fails its chain check', () => {
    const source = testEngine();
    openCard(source, 'Source card');
    openCard(source, 'Source card 2');
    const rows = rawRows(source.db);
    const engine = testEngine();
    const seen = record(engine);
    assert.throws(() => engine.importRows([rows[0]!, { ...rows[1]!, hash: 'f'.repeat(64) }]), {
      code: 'ErrChainMismatch',
    });
    assert.deepEqual(seen, []);
    assert.equal(countEvents(engine.db), 0);
  });
});
