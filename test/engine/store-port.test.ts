import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedClock } from '../../src/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { SqliteEventStore } from '../../src/engine/sqlite-store.js';
import { PgEventStore } from '../../src/engine/pg/store.js';
import { LOG_START, type EventStore } from '../../src/engine/store-port.js';
import { isDomainError } from '../../src/errors.js';
import { ev } from '../helpers/event-log.js';
import { pgScratch, pgSkip, readAllOf } from '../helpers/pg.js';

/**
 * The store port's contract, run against both stores: whatever the engine relies on must hold on
 * SQLite and on PostgreSQL alike. (PostgreSQL-only behaviour — many nodes, late commits — is in
 * test/engine/pg/.)
 */
interface Opened {
  store: EventStore;
  tenant: string;
  done(): Promise<void>;
}

const clock = () => fixedClock('2026-01-01T00:00:00.000Z', 1000);

const STORES: { name: string; skip: string | false; open(): Promise<Opened> }[] = [
  {
    name: 'SQLite',
    skip: false,
    async open() {
      const store = new SqliteEventStore(Engine.open({ file: ':memory:', clock: clock() }), 'acme');
      return { store, tenant: 'acme', done: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    async open() {
      const scratch = pgScratch();
      const store = await PgEventStore.open(scratch.url, { clock: clock() });
      return { store, tenant: 'acme', done: async () => (await store.close(), await scratch.drop()) };
    },
  },
];

async function rejectsCode(promise: Promise<unknown>, code: string, pattern?: RegExp): Promise<void> {
  await assert.rejects(
    promise,
    (e: unknown) => isDomainError(e) && e.code === code && (!pattern || pattern.test(e.message)),
  );
}

for (const kind of STORES) {
  describe(`the store port on ${kind.name}`, { skip: kind.skip }, () => {
    const withStore = (body: (o: Opened) => Promise<void>) => async () => {
      const opened = await kind.open();
      try {
        await body(opened);
      } finally {
        await opened.done();
      }
    };

    it(
      'appends with positions from 1, versions per stream, a linked chain and the head at the end',
      withStore(async ({ store, tenant }) => {
        const a = await store.append({
          tenant,
          streamId: 'card-1',
          expected: 'no_stream',
          events: [ev('Opened'), ev('Moved')],
          actor: 'ann',
        });
        const b = await store.append({
          tenant,
          streamId: 'card-2',
          expected: 'no_stream',
          events: [ev('Opened')],
          actor: 'bob',
        });
        assert.deepEqual(
          [...a.events, ...b.events].map((e) => [e.position, e.streamId, e.version]),
          [
            [1, 'card-1', 1],
            [1 + 1, 'card-1', 2],
            [3, 'card-2', 1],
          ],
        );
        assert.equal(a.events[0]!.meta.actor, 'ann');
        const rows = await store.readRows(tenant, 0, 10);
        assert.equal(rows[1]!.prev_hash, rows[0]!.hash);
        assert.deepEqual(await store.head(tenant), { position: 3, hash: rows[2]!.hash });
        assert.deepEqual((await store.verify()).get(tenant), {
          ok: true,
          events: 3,
          head: { position: 3, hash: rows[2]!.hash },
        });
      }),
    );

    it(
      'refuses a stale expected version and an event it cannot store, writing nothing',
      withStore(async ({ store, tenant }) => {
        await store.append({ tenant, streamId: 'card-1', expected: 'no_stream', events: [ev('Opened')], actor: 'ann' });
        await rejectsCode(
          store.append({ tenant, streamId: 'card-1', expected: 'no_stream', events: [ev('Opened')], actor: 'bob' }),
          'ErrConcurrency',
          /card-1 is at version 1, expected no_stream/,
        );
        await rejectsCode(
          store.append({ tenant, streamId: 'card-1', expected: 1, events: [ev('')], actor: 'ann' }),
          'ErrInvalidInput',
          /event type/,
        );
        await rejectsCode(
          store.append({
            tenant,
            streamId: 'card-1',
            expected: 1,
            events: [ev('Moved', { n: 10n })],
            actor: 'ann',
          }),
          'ErrInvalidInput',
          /not JSON/,
        );
        await rejectsCode(
          store.append({ tenant, streamId: '', expected: 'any', events: [ev('X')], actor: 'ann' }),
          'ErrInvalidInput',
          /stream id/,
        );
        assert.equal((await store.head(tenant)).position, 1);
      }),
    );

    it(
      'answers a retried command id with its first events and appends nothing',
      withStore(async ({ store, tenant }) => {
        const request = {
          tenant,
          streamId: 'card-1',
          expected: 'any' as const,
          events: [ev('Opened', { n: 1 })],
          actor: 'ann',
          commandId: 'key-1',
        };
        const first = await store.append(request);
        const again = await store.append({ ...request, events: [ev('Opened', { n: 2 })] });
        assert.equal(again.duplicate, true);
        assert.deepEqual(
          again.events.map((e) => [e.position, e.data, e.meta.commandId]),
          first.events.map((e) => [e.position, e.data, 'key-1']),
        );
        const empty = await store.append({ ...request, commandId: 'key-2', events: [] });
        assert.deepEqual(empty, { events: [], duplicate: false });
        assert.deepEqual(await store.append({ ...request, commandId: 'key-2' }), { events: [], duplicate: true });
        assert.equal((await store.head(tenant)).position, 1);
      }),
    );

    it(
      'reads a stream by version range and the whole log in pages, in order',
      withStore(async ({ store, tenant }) => {
        for (let i = 1; i <= 5; i++)
          await store.append({
            tenant,
            streamId: `card-${i % 2}`,
            expected: 'any',
            events: [ev('N', { i })],
            actor: 'ann',
          });
        const odd = await store.readStream(tenant, 'card-1', { from: 2, to: 3 });
        assert.deepEqual(
          odd.map((e) => [e.version, e.data]),
          [
            [2, { i: 3 }],
            [3, { i: 5 }],
          ],
        );
        assert.deepEqual(
          (await store.readStream(tenant, 'card-0', { max: 1 })).map((e) => e.data),
          [{ i: 2 }],
        );
        const all = await readAllOf(store, 5, LOG_START, 2);
        assert.deepEqual(
          all.map((e) => [e.tenant, e.position]),
          [1, 2, 3, 4, 5].map((p) => [tenant, p]),
        );
        assert.deepEqual(
          (await readAllOf(store, 2, all[2]!.cursor, 2)).map((e) => e.position),
          [4, 5],
        );
      }),
    );

    it(
      'imports an exported log with every hash intact, and refuses a row that does not continue the chain',
      withStore(async ({ store, tenant }) => {
        await store.append({
          tenant,
          streamId: 'card-1',
          expected: 'any',
          events: [ev('A'), ev('B')],
          actor: 'ann',
          commandId: 'k',
        });
        await store.append({ tenant, streamId: 'card-2', expected: 'any', events: [ev('C')], actor: 'bob' });
        const rows = await store.readRows(tenant, 0, 100);
        const target = await kind.open();
        try {
          await rejectsCode(target.store.importRows(target.tenant, [rows[1]!]), 'ErrChainMismatch', /does not follow/);
          const forged = { ...rows[0]!, data: '{"forged":true}' };
          await rejectsCode(target.store.importRows(target.tenant, [forged]), 'ErrChainMismatch', /hash/);
          assert.equal((await target.store.head(target.tenant)).position, 0);
          await target.store.importRows(target.tenant, rows);
          assert.deepEqual(await target.store.readRows(target.tenant, 0, 100), rows);
          assert.deepEqual(await target.store.head(target.tenant), await store.head(tenant));
          assert.equal((await target.store.verify()).get(target.tenant)?.ok, true);
          const retried = await target.store.append({
            tenant: target.tenant,
            streamId: 'card-1',
            expected: 'any',
            events: [ev('Z')],
            actor: 'ann',
            commandId: 'k',
          });
          assert.equal(retried.duplicate, true, 'a command recorded before the move is still answered after it');
        } finally {
          await target.done();
        }
      }),
    );

    it(
      'claims id marks with the append: a stale claim is a lost race and writes nothing; an import raises them',
      withStore(async ({ store, tenant }) => {
        const request = {
          tenant,
          streamId: 'ticket-2',
          expected: 'any' as const,
          events: [ev('Opened')],
          actor: 'ann',
        };
        await store.append({ ...request, sequences: { ticket: { from: 0, to: 2 }, message: { from: 0, to: 1 } } });
        assert.deepEqual(Object.fromEntries(await store.sequences(tenant)), { ticket: 2, message: 1 });
        await rejectsCode(
          store.append({ ...request, streamId: 'ticket-1', sequences: { ticket: { from: 0, to: 1 } } }),
          'ErrConcurrency',
          /another command took ticket ids first \(at 2, expected 0\)/,
        );
        assert.equal((await store.head(tenant)).position, 1);
        const rows = await store.readRows(tenant, 0, 10);
        const target = await kind.open();
        try {
          await target.store.importRows(target.tenant, rows);
          assert.equal(
            (await target.store.sequences(target.tenant)).get('ticket'),
            2,
            'raised to the highest ticket-<n> stream',
          );
        } finally {
          await target.done();
        }
      }),
    );
  });
}
