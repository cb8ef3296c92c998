import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { Engine } from '../../src/engine/engine.js';
import { loadState } from '../../src/engine/state.js';
import { cardDecider, cardStream } from '../../testkit/cards.js';
import { openCard, runCard, testEngine, TEST_PROJECTIONS } from '../helpers/engine.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The per-stream state cache of loadState: a command reads only the events after the state it folded
 * last time, and never trusts that state once the log no longer holds the event it was folded from.
 */
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

const comments = (engine: Engine, cardId: number): number => {
  const { state } = loadState(engine.db, cardDecider, cardStream(cardId));
  return state.status === 'open' ? state.comments : -1;
};

describe('stream state cache', () => {
  it('folds only what was appended since, and agrees with a fold from the start', () => {
    const engine = testEngine();
    cleanups.push(() => engine.close());
    const id = openCard(engine, 'cached');
    for (let i = 0; i < 50; i++) runCard(engine, id, { type: 'CommentCard', text: `c${i}` });
    assert.equal(comments(engine, id), 50);
    const full = loadState(engine.db, cardDecider, cardStream(id), 1_000_000);
    assert.deepEqual(loadState(engine.db, cardDecider, cardStream(id)), full, 'the cached state equals a full fold');
  });

  it('drops a state folded from events that a rollback took back, even once another event holds that version', () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = `${dir}/colony.db`;
    const a = Engine.open({ file, projections: TEST_PROJECTIONS, durability: 'normal' });
    const b = Engine.open({ file, projections: TEST_PROJECTIONS, durability: 'normal' });
    cleanups.push(() => {
      a.close();
      b.close();
    });
    const id = openCard(a, 'rolled back');
    runCard(a, id, { type: 'CommentCard', text: 'kept' });
    assert.throws(
      () =>
        a.transact({ actor: 'tester' }, () => {
          runCard(a, id, { type: 'CommentCard', text: 'lost' });
          assert.equal(comments(a, id), 2, 'inside the command the append is visible (and cached at version 3)');
          throw new Error('abort');
        }),
      /abort/,
    );
    runCard(b, id, { type: 'MoveCard', to: 'doing' }); // version 3 again, a different event
    assert.equal(comments(a, id), 1, 'the hash at version 3 differs from the cached one: folded again from the start');
    const full = loadState(a.db, cardDecider, cardStream(id), 1_000_000);
    assert.deepEqual(loadState(a.db, cardDecider, cardStream(id)), full);
  });

  it('sees what another connection appended to the same stream', () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = `${dir}/colony.db`;
    const a = Engine.open({ file, projections: TEST_PROJECTIONS, durability: 'normal' });
    const b = Engine.open({ file, projections: TEST_PROJECTIONS, durability: 'normal' });
    cleanups.push(() => {
      a.close();
      b.close();
    });
    const id = openCard(a, 'shared');
    runCard(a, id, { type: 'CommentCard', text: 'from a' });
    assert.equal(comments(a, id), 1);
    runCard(b, id, { type: 'CommentCard', text: 'from b' });
    runCard(b, id, { type: 'CommentCard', text: 'from b again' });
    assert.equal(comments(a, id), 3, 'a reads the two events b appended after its cached version');
    runCard(a, id, { type: 'MoveCard', to: 'doing' });
    assert.equal(comments(b, id), 3);
  });
});
