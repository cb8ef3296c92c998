import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedClock } from '../../src/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { handleOnStore } from '../../src/engine/handle-store.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import { SqliteEventStore } from '../../src/engine/sqlite-store.js';
import type { Decider } from '../../src/engine/decider.js';
import type { Event } from '../../src/engine/event.js';
import type { EventStore } from '../../src/engine/store-port.js';
import { isDomainError } from '../../src/errors.js';
import { cardDecider, type CardCommand } from '../../testkit/cards.js';
import { pgScratch, pgSkip } from '../helpers/pg.js';

/** Deciders over the store port, on both stores: the same outcomes, races decided again on the new state. */
const STORES: {
  name: string;
  skip: string | false;
  open(): Promise<{ stores: EventStore[]; done(): Promise<void> }>;
}[] = [
  {
    name: 'SQLite',
    skip: false,
    async open() {
      const store = new SqliteEventStore(
        Engine.open({ file: ':memory:', clock: fixedClock('2026-01-01T00:00:00Z', 1000) }),
        'acme',
      );
      return { stores: [store], done: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    async open() {
      const scratch = pgScratch();
      // Three pools: three nodes' worth of connections racing on one database.
      const stores = await Promise.all([1, 2, 3].map(() => PgEventStore.open(scratch.url, { poolSize: 4 })));
      return { stores, done: async () => (await Promise.all(stores.map((s) => s.close())), await scratch.drop()) };
    },
  },
];

const rejectsCode = (p: Promise<unknown>, code: string) =>
  assert.rejects(p, (e: unknown) => isDomainError(e) && e.code === code);

for (const kind of STORES) {
  describe(`deciders over the store port on ${kind.name}`, { skip: kind.skip }, () => {
    const run = (
      store: EventStore,
      command: CardCommand,
      extra: { commandId?: string; expectedVersion?: number } = {},
    ) => handleOnStore(store, cardDecider, 'card-1', command, { tenant: 'acme', actor: 'ann', ...extra });

    it('decides, appends and folds; a refusal writes nothing', async () => {
      const { stores, done } = await kind.open();
      const store = stores[0]!;
      try {
        await run(store, { type: 'OpenCard', cardId: 1, title: 'Write the docs', column: 'todo' });
        const finished = await run(store, { type: 'FinishCard', reason: 'shipped' });
        assert.deepEqual(
          finished.events.map((e) => e.type),
          ['CardMoved', 'CardClosed'],
        );
        assert.deepEqual([finished.state, finished.version], [{ status: 'closed', cardId: 1, column: 'done' }, 3]);
        await rejectsCode(run(store, { type: 'MoveCard', to: 'todo' }), 'ErrCardClosed');
        await rejectsCode(run(store, { type: 'CommentCard', text: 'x' }, { expectedVersion: 2 }), 'ErrConcurrency');
        assert.equal((await store.readStream('acme', 'card-1')).length, 3);
      } finally {
        await done();
      }
    });

    it('answers a retried command id from the record, though deciding again would refuse', async () => {
      const { stores, done } = await kind.open();
      try {
        const open = { type: 'OpenCard', cardId: 1, title: 'Write the docs', column: 'todo' } as const;
        const first = await run(stores[0]!, open, { commandId: 'open-1' });
        const again = await run(stores[stores.length - 1]!, open, { commandId: 'open-1' });
        assert.deepEqual(
          [again.duplicate, again.events.map((e) => e.position), again.version],
          [true, first.events.map((e) => e.position), 1],
        );
        await rejectsCode(run(stores[0]!, open, { commandId: 'open-2' }), 'ErrCardExists');
      } finally {
        await done();
      }
    });

    it('decides a lost race again on the new state: one card opened, every comment kept', async () => {
      const { stores, done } = await kind.open();
      try {
        const opens = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) =>
            run(stores[i % stores.length]!, { type: 'OpenCard', cardId: 1, title: `Card by ${i}`, column: 'todo' }),
          ),
        );
        assert.equal(opens.filter((o) => o.status === 'fulfilled').length, 1, 'exactly one winner');
        for (const o of opens)
          if (o.status === 'rejected') assert.equal((o.reason as { code: string }).code, 'ErrCardExists');
        const comments = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            handleOnStore(
              stores[i % stores.length]!,
              cardDecider,
              'card-1',
              { type: 'CommentCard', text: `c${i}` },
              { tenant: 'acme', actor: 'ann', retries: 50 },
            ),
          ),
        );
        assert.deepEqual(
          comments.map((c) => c.version).sort((a, b) => a - b),
          Array.from({ length: 12 }, (_, i) => i + 2),
        );
        const final = await run(stores[0]!, { type: 'MoveCard', to: 'doing' });
        assert.deepEqual(final.state, { status: 'open', cardId: 1, column: 'doing', comments: 12 });
        assert.equal(
          [...(await stores[0]!.verify())].every(([, r]) => r.ok),
          true,
        );
      } finally {
        await done();
      }
    });

    it('gives racing decisions gap-free ids, each taken once', async () => {
      const { stores, done } = await kind.open();
      try {
        // A decider that names what it opens with a new integer id, as the domain's creation commands do.
        const tickets: Decider<number, { type: 'Open' }, Event<'Opened', { ticket: number }>> = {
          initialState: () => 0,
          evolve: (n) => n + 1,
          decide: (_c, _s, ctx) => [{ type: 'Opened', data: { ticket: ctx.ids.next('ticket') } }],
        };
        const opened = await Promise.all(
          Array.from({ length: 15 }, (_, i) =>
            handleOnStore(
              stores[i % stores.length]!,
              tickets,
              `queue-${i % 3}`,
              { type: 'Open' },
              { tenant: 'acme', actor: 'ann', retries: 100 },
            ),
          ),
        );
        const ids = opened.map((o) => o.events[0]!.data.ticket).sort((a, b) => a - b);
        assert.deepEqual(
          ids,
          Array.from({ length: 15 }, (_, i) => i + 1),
        );
        assert.equal((await stores[0]!.sequences('acme')).get('ticket'), 15);
      } finally {
        await done();
      }
    });
  });
}
