import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { StoredEvent } from '../../src/engine/event.js';
import { MAX_BATCH } from '../../src/engine/group-batch.js';
import { cardDecider, cardStream } from '../../testkit/cards.js';
import { openCard, TEST_PROJECTIONS, witnessedEngine } from '../helpers/engine.js';

/**
 * Group commit (src/engine/group-commit.ts): grouped callers that arrive together share one COMMIT, each
 * command a savepoint of it; nobody is answered and nothing is published before that COMMIT. Another
 * connection on the same file is the witness of what is committed.
 */
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function setup() {
  const { engine, witness, close } = witnessedEngine({ projections: TEST_PROJECTIONS, durability: 'full' });
  cleanups.push(close);
  const committed = () => witness.prepare('SELECT COUNT(*) FROM es_events').pluck().get() as number;
  const published: StoredEvent[] = [];
  const sub = engine.bus.events$.subscribe((e) => published.push(e));
  cleanups.push(() => sub.unsubscribe());
  const card = openCard(engine, 'shared');
  const comment = (text: string, commandId?: string) =>
    engine.group.run(async () =>
      engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text }, { actor: 'tester', commandId }),
    );
  return { engine, committed, published, card, comment };
}

describe('group commit', () => {
  it('commits callers that arrive together once, answers them after the COMMIT and publishes after it', async () => {
    const { engine, committed, published, comment } = setup();
    const before = committed();
    const batches = engine.group.stats.batches;
    published.length = 0;
    const calls = Array.from({ length: 10 }, (_, i) => comment(`c${i}`));
    // Every command has run (they are synchronous), but none is committed, answered or published yet.
    assert.equal(committed(), before, 'nothing is visible to another connection before the COMMIT');
    assert.equal(published.length, 0, 'nothing is published before the COMMIT');
    const results = await Promise.all(calls);
    assert.equal(committed(), before + 10, 'all ten are committed when they are answered');
    assert.equal(engine.group.stats.batches, batches + 1, 'in one COMMIT');
    assert.deepEqual(
      results.map((r) => r.events[0]!.position),
      Array.from({ length: 10 }, (_, i) => before + 1 + i),
      'in arrival order, no gaps',
    );
    assert.deepEqual(
      published.map((e) => (e.data as { text: string }).text),
      Array.from({ length: 10 }, (_, i) => `c${i}`),
    );
    assert.equal(engine.verify().ok, true);
  });

  it('rolls back only the command that failed; the others of its batch commit', async () => {
    const { engine, committed, card } = setup();
    const before = committed();
    const ok = (text: string) =>
      engine.group.run(
        async () => engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text }, { actor: 't' }).events,
      );
    const failing = engine.group.run(async () =>
      engine.transact({ actor: 't' }, () => {
        engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text: 'undone' }, { actor: 't' });
        throw new Error('refused');
      }),
    );
    const missing = engine.group.run(async () =>
      engine.handle(cardDecider, cardStream(999), { type: 'CommentCard', text: 'x' }, { actor: 't' }),
    );
    const [a, b] = [ok('first'), ok('second')];
    await assert.rejects(failing, /refused/);
    await assert.rejects(missing);
    const [ea, eb] = await Promise.all([a, b]);
    assert.equal(committed(), before + 2);
    assert.equal(eb![0]!.position, ea![0]!.position + 1, 'no position was taken by the rolled-back commands');
    const texts = engine.db
      .prepare(`SELECT json_extract(data, '$.text') FROM es_events WHERE type = 'CardCommented'`)
      .pluck()
      .all();
    assert.deepEqual(texts, ['first', 'second']);
    assert.equal(engine.verify().ok, true);
  });

  it('answers a retried idempotency key in the same batch with the first run, appending once', async () => {
    const { committed, comment } = setup();
    const before = committed();
    const [first, again] = await Promise.all([comment('once', 'key-1'), comment('once', 'key-1')]);
    assert.equal(first.duplicate, false);
    assert.equal(again.duplicate, true);
    assert.deepEqual(
      again.events.map((e) => e.position),
      first.events.map((e) => e.position),
    );
    assert.equal(committed(), before + 1);
  });

  it('commits the open batch before a command that is not grouped runs its own transaction', async () => {
    const { engine, committed, card, comment } = setup();
    const before = committed();
    const grouped = comment('grouped');
    assert.equal(committed(), before);
    engine.handle(cardDecider, cardStream(card), { type: 'CommentCard', text: 'alone' }, { actor: 't' });
    assert.equal(committed(), before + 2, 'the batch committed first, then the lone command');
    await grouped;
  });

  it('a caller that never yields to the event loop still commits every MAX_BATCH commands', async () => {
    const { engine, committed, comment } = setup();
    const before = committed();
    const batches = engine.group.stats.batches;
    const calls = Array.from({ length: MAX_BATCH + 5 }, (_, i) => comment(`n${i}`));
    assert.equal(committed(), before + MAX_BATCH, 'a full batch committed without waiting for the event loop');
    await Promise.all(calls);
    assert.equal(engine.group.stats.batches, batches + 2);
  });
});

describe('group commit and the work a call leaves behind', () => {
  it('a command run after its call settled (a timer the call set) commits on its own', async () => {
    const { engine, committed, card } = setup();
    const before = committed();
    let later: Promise<void> = Promise.resolve();
    await engine.group.run(async () => {
      later = new Promise((resolve) =>
        setTimeout(() => {
          engine.handle(
            cardDecider,
            cardStream(card),
            { type: 'CommentCard', text: 'after the answer' },
            { actor: 't' },
          );
          // Not joined to a batch: visible to another connection at once.
          assert.equal(committed(), before + 1);
          resolve();
        }, 5),
      );
    });
    await later;
  });
});
