import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedClock } from '../../src/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { get } from '../../src/engine/projection-sql.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import { SqliteEventStore } from '../../src/engine/sqlite-store.js';
import type { EventStore } from '../../src/engine/store-port.js';
import { decide, type Unit } from '../../src/engine/unit-of-work.js';
import { DomainError, isDomainError } from '../../src/errors.js';
import { cardProjections } from '../../testkit/card-projections.js';
import { cardDecider, cardStream } from '../../testkit/cards.js';
import { pgScratch, pgSkip } from '../helpers/pg.js';

/**
 * Units of work on both stores (engine/unit-of-work.ts): facts read from read models and commands
 * decided in one transaction that holds the tenant's write lock from its start — so a rule across
 * streams holds however many writers race — with refusals thrown into the unit, retries answered from
 * the record, and nothing written by a unit that fails.
 */
const clock = () => fixedClock('2026-01-01T00:00:00.000Z', 1000);

interface Opened {
  /** Several handles on one store: on PostgreSQL separate pools, as separate nodes would have. */
  stores: EventStore[];
  done(): Promise<void>;
}

const KINDS: { name: string; skip: string | false; open(nodes: number): Promise<Opened> }[] = [
  {
    name: 'SQLite',
    skip: false,
    async open() {
      const store = new SqliteEventStore(
        Engine.open({ file: ':memory:', clock: clock(), projections: cardProjections }),
        'acme',
      );
      return { stores: [store], done: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    async open(nodes) {
      const scratch = pgScratch();
      const stores: PgEventStore[] = [];
      for (let i = 0; i < nodes; i++)
        stores.push(
          await PgEventStore.open(scratch.url, { clock: clock(), projections: cardProjections, poolSize: 8 }),
        );
      return {
        stores,
        async done() {
          await Promise.all(stores.map((s) => s.close()));
          await scratch.drop();
        },
      };
    },
  },
];

/** A card whose title no open card has: the rule reads the `cards` read model, across every card's stream. */
function* openUnique(cardId: number, title: string): Unit<number> {
  const taken = yield* get<{ n: number }>(`SELECT count(*) AS n FROM cards WHERE title = ? AND status = 'open'`, title);
  if (taken!.n > 0) throw new DomainError('ErrNameTaken', `an open card is titled ${title}`);
  const { version } = yield* decide(cardDecider, cardStream(cardId), {
    type: 'OpenCard',
    cardId,
    title,
    column: 'todo',
  });
  return version;
}

const titled = async (store: EventStore, title: string) =>
  (
    await store.unit('acme', { actor: 'reader' }, function* () {
      return (yield* get<{ n: number }>('SELECT count(*) AS n FROM cards WHERE title = ?', title))!.n;
    })
  ).value;

for (const kind of KINDS) {
  describe(`units of work on ${kind.name}`, { skip: kind.skip }, () => {
    it('keep a rule across streams when 30 writers race on 3 nodes: one title, one card', async () => {
      const { stores, done } = await kind.open(3);
      try {
        const outcomes = await Promise.allSettled(
          Array.from({ length: 30 }, (_, i) =>
            stores[i % stores.length]!.unit('acme', { actor: `w${i}` }, () => openUnique(i + 1, 'the one')),
          ),
        );
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        const refused = outcomes.filter(
          (o) => o.status === 'rejected' && isDomainError(o.reason) && o.reason.code === 'ErrNameTaken',
        );
        assert.deepEqual([won.length, refused.length], [1, 29]);
        assert.equal(await titled(stores[0]!, 'the one'), 1);
        assert.equal((await stores[0]!.head('acme')).position, 1);
      } finally {
        await done();
      }
    });

    it("throws a decider's refusal into the unit, which may catch it and go on", async () => {
      const { stores, done } = await kind.open(1);
      const store = stores[0]!;
      try {
        await store.unit('acme', { actor: 'a' }, () => openUnique(1, 'first'));
        const result = await store.unit('acme', { actor: 'a' }, function* () {
          try {
            yield* decide(cardDecider, cardStream(1), { type: 'OpenCard', cardId: 1, title: 'again', column: 'todo' });
            return 'opened twice';
          } catch (e) {
            assert.ok(isDomainError(e) && e.code === 'ErrCardExists');
          }
          const moved = yield* decide(cardDecider, cardStream(1), { type: 'MoveCard', to: 'doing' });
          const after = yield* get<{ column_name: string }>('SELECT column_name FROM cards WHERE card_id = ?', 1);
          return `${moved.events.map((e) => e.type).join()} v${moved.version} ${after!.column_name}`;
        });
        assert.equal(result.value, 'CardMoved v2 doing', 'the read model is current inside the unit');
      } finally {
        await done();
      }
    });

    it('refuses an idempotency key used again with other arguments (ErrIdempotencyConflict), writing nothing', async () => {
      const { stores, done } = await kind.open(1);
      const store = stores[0]!;
      try {
        const keyed = (digest: string) => ({ actor: 'a', commandId: `key:k1:${digest}`, idempotencyScope: 'key:k1:' });
        await store.unit('acme', keyed('aaaa'), () => openUnique(1, 'one'));
        const again = await store.unit('acme', keyed('aaaa'), () => openUnique(1, 'one'));
        assert.equal(again.duplicate, true, 'the same key and arguments: the first answer');
        const head = await store.head('acme');
        await assert.rejects(
          store.unit('acme', keyed('bbbb'), () => openUnique(2, 'two')),
          (e) => isDomainError(e) && e.code === 'ErrIdempotencyConflict',
        );
        assert.deepEqual(await store.head('acme'), head);
      } finally {
        await done();
      }
    });

    it('answers a retry with the same command id from the record, and writes nothing for a unit that fails', async () => {
      const { stores, done } = await kind.open(1);
      const store = stores[0]!;
      try {
        const options = { actor: 'a', commandId: 'open-two-cards' };
        const both = function* () {
          yield* openUnique(1, 'one');
          yield* openUnique(2, 'two');
          return 'done';
        };
        const first = await store.unit('acme', options, both);
        assert.deepEqual(
          [first.value, first.duplicate, first.events.map((e) => e.streamId)],
          ['done', false, ['card-1', 'card-2']],
        );
        const retry = await store.unit('acme', options, both);
        assert.deepEqual([retry.value, retry.duplicate], [undefined, true]);
        assert.deepEqual(
          retry.events.map((e) => e.position),
          first.events.map((e) => e.position),
        );
        const head = await store.head('acme');
        await assert.rejects(
          store.unit('acme', { actor: 'a' }, function* () {
            yield* openUnique(3, 'three');
            yield* openUnique(4, 'one'); // taken: the whole unit fails, card 3 too
          }),
          (e: unknown) => isDomainError(e) && e.code === 'ErrNameTaken',
        );
        assert.deepEqual(await store.head('acme'), head);
        assert.equal(await titled(store, 'three'), 0);
      } finally {
        await done();
      }
    });
  });
}
