import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Event } from '../../../src/engine/event.js';
import type { Projection } from '../../../src/engine/projection.js';
import { get, run } from '../../../src/engine/projection-sql.js';
import { readSchema } from '../../../src/engine/pg/projections.js';
import { TENANT_PAGE } from '../../../src/engine/pg/rows.js';
import { PgEventStore } from '../../../src/engine/pg/store.js';
import { PgTail } from '../../../src/engine/pg/tail.js';
import { LOG_START, type TenantEvent } from '../../../src/engine/store-port.js';
import { isDomainError } from '../../../src/errors.js';
import { ev } from '../../helpers/event-log.js';
import { pgRaw, pgScratch, pgSkip, readAllOf, type PgScratch } from '../../helpers/pg.js';

/** PostgreSQL-only behaviour of the store: many writers, tenants in parallel, late commits, tampering. */
async function withScratch(body: (scratch: PgScratch) => Promise<void>): Promise<void> {
  const scratch = pgScratch();
  try {
    await body(scratch);
  } finally {
    await scratch.drop();
  }
}

async function until(check: () => boolean): Promise<void> {
  for (const start = Date.now(); !check(); await new Promise((r) => setTimeout(r, 20)))
    if (Date.now() - start > 5000) throw new Error('timed out');
}

interface PlanNode {
  'Actual Rows': number;
  Plans?: PlanNode[];
}

const ok = (results: Map<string, { ok: boolean }>) => [...results].map(([t, r]) => [t, r.ok]);

describe('the PostgreSQL store', { skip: pgSkip }, () => {
  it('lets exactly one of many writers on separate pools win each version of a stream', () =>
    withScratch(async ({ url }) => {
      const nodes = await Promise.all([1, 2, 3].map(() => PgEventStore.open(url, { poolSize: 4 })));
      try {
        const tries = Array.from({ length: 30 }, (_, i) =>
          nodes[i % 3]!.append({
            tenant: 'acme',
            streamId: 'task-1',
            expected: 'no_stream',
            events: [ev('Claimed', { by: i })],
            actor: `agent-${i}`,
          }),
        );
        const settled = await Promise.allSettled(tries);
        const won = settled.filter((s) => s.status === 'fulfilled');
        const lost = settled.filter((s) => s.status === 'rejected');
        assert.equal(won.length, 1);
        assert.ok(lost.every((s) => isDomainError(s.reason) && s.reason.code === 'ErrConcurrency'));
        assert.equal((await nodes[0]!.readStream('acme', 'task-1')).length, 1);
        assert.deepEqual(ok(await nodes[1]!.verify()), [['acme', true]]);
      } finally {
        await Promise.all(nodes.map((n) => n.close()));
      }
    }));

  it('keeps one gap-free chain per tenant while tenants append in parallel', () =>
    withScratch(async ({ url }) => {
      const store = await PgEventStore.open(url, { poolSize: 8 });
      try {
        const tenants = ['acme', 'globex', 'initech', 'umbrella'];
        await Promise.all(
          tenants.flatMap((tenant) =>
            Array.from({ length: 25 }, (_, i) =>
              store.append({
                tenant,
                streamId: `card-${i % 5}`,
                expected: 'any',
                events: [ev('N', { i })],
                actor: 'ann',
              }),
            ),
          ),
        );
        assert.deepEqual(
          ok(await store.verify()),
          tenants.map((t) => [t, true]),
        );
        for (const tenant of tenants) assert.equal((await store.head(tenant)).position, 25);
        const all = await readAllOf(store, 100, LOG_START, 30);
        assert.equal(all.length, 100);
        for (const tenant of tenants) {
          const mine = all.filter((e) => e.tenant === tenant).map((e) => e.position);
          assert.deepEqual(
            mine,
            Array.from({ length: 25 }, (_, i) => i + 1),
            `${tenant}'s events in chain order`,
          );
        }
      } finally {
        await store.close();
      }
    }));

  it('never lets a reader — the ordered read, a tail, a rebuild — pass over an append that took a lower sequence number but commits later', () =>
    withScratch(async ({ url, schema }) => {
      // The slow append holds its transaction open in a projection, after its row is inserted: it waits
      // for an advisory lock the test holds.
      const HOLD = 0x686f6c64; // 'hold'
      const holder = await pgRaw({ url, schema, drop: async () => undefined });
      await holder.query('SELECT pg_advisory_lock($1)', [HOLD]);
      const release = () => holder.query('SELECT pg_advisory_unlock_all()').then(() => undefined);
      const holdSlow: Projection<Event, never> = {
        name: 'hold',
        version: 1,
        handles: ['Slow'],
        tables: [],
        init: () => '',
        *apply() {
          yield* get('SELECT pg_advisory_xact_lock(?)', HOLD);
        },
      };
      const slowInside = async () => {
        for (;;) {
          const waiting = await holder.query(
            `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`,
            [HOLD],
          );
          if (waiting.rows.length) return;
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      // What a rebuild must give: every event's type, in the order the rebuild met them.
      const seenTypes: Projection<Event, 'seen'> = {
        name: 'seen',
        version: 1,
        handles: 'all',
        tables: ['seen'],
        init: (t) => `CREATE TABLE IF NOT EXISTS "${t.seen}" (position INTEGER PRIMARY KEY, type TEXT NOT NULL)`,
        *apply(e, t) {
          yield run(`INSERT INTO "${t.seen}" (position, type) VALUES (?, ?)`, e.position, e.type);
        },
      };
      const writer = await PgEventStore.open(url, { projections: [holdSlow] });
      const reader = await PgEventStore.open(url, { projections: [seenTypes] });
      const tailed: string[] = [];
      const tail = await PgTail.start(reader, {
        pollMs: 600_000,
        onEvents: (events) => void tailed.push(...events.map((e) => e.type)),
      });
      let rebuilding: Promise<unknown> = Promise.resolve();
      try {
        const slow = writer.append({
          tenant: 'slow',
          streamId: 's-1',
          expected: 'any',
          events: [ev('Slow')],
          actor: 'a',
        });
        await slowInside();
        const fast = await writer.append({
          tenant: 'fast',
          streamId: 'f-1',
          expected: 'any',
          events: [ev('Fast')],
          actor: 'b',
        });
        // A naive reader (global_seq > last seen) would take 'Fast' now and never look back at the lower number.
        const raw = await pgRaw({ url, schema, drop: async () => undefined });
        const naive = await raw.query<{ type: string; global_seq: string }>(
          'SELECT type, global_seq FROM es_events ORDER BY global_seq',
        );
        await raw.end();
        assert.deepEqual(
          naive.rows.map((r) => r.type),
          ['Fast'],
        );
        assert.ok(Number(naive.rows[0]!.global_seq) > 1, 'Fast took the higher sequence number');
        assert.deepEqual(
          (await reader.readAll(LOG_START)).events,
          [],
          'nothing is read while an older transaction runs',
        );
        rebuilding = reader.rebuild(['seen'], 'slow'); // it must wait for the slow append to swap in
        await tail.wake();
        assert.deepEqual(tailed, [], 'the tail, woken by Fast, waits for Slow too');
        await release();
        const slowEvents = (await slow).events as TenantEvent[];
        const after = await readAllOf(reader, 2);
        assert.deepEqual(
          after.map((e) => e.type),
          ['Slow', 'Fast'],
          'both, in transaction order',
        );
        await rebuilding;
        const rebuilt = await reader.pool.query<{ type: string }>(
          `SELECT type FROM "${readSchema(schema, 'slow')}".seen ORDER BY position`,
        );
        assert.deepEqual(
          rebuilt.rows.map((r) => r.type),
          ['Slow'],
          "the tenant's rebuild, started while Slow was in flight, waited for it",
        );
        await until(() => tailed.length === 2);
        assert.deepEqual(tailed, ['Slow', 'Fast'], 'the tail saw both, in order');
        assert.ok(slowEvents[0]!.cursor.seq < (fast.events[0] as TenantEvent).cursor.seq);
      } finally {
        await release();
        await holder.end();
        await rebuilding.catch(() => undefined);
        await tail.stop();
        await writer.close();
        await reader.close();
      }
    }));

  it('rolls an append back with its projection, and a projection sees its events inside the transaction', () =>
    withScratch(async ({ url }) => {
      // It reads the log inside the append's transaction: the tenant's events, this one included.
      const counts: Projection<Event, 'counts'> = {
        name: 'counts',
        version: 1,
        handles: 'all',
        tables: ['counts'],
        init: (t) => `CREATE TABLE IF NOT EXISTS "${t.counts}" (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)`,
        *apply(e, t) {
          if (e.type === 'Poison') throw new Error('projection failed');
          yield run(
            `INSERT INTO "${t.counts}" VALUES (1, (SELECT count(*) FROM es_events WHERE tenant = (SELECT tenant FROM rm_tenant)))
             ON CONFLICT (id) DO UPDATE SET n = excluded.n`,
          );
        },
      };
      const store = await PgEventStore.open(url, { projections: [counts] });
      try {
        await store.append({
          tenant: 'acme',
          streamId: 'c-1',
          expected: 'any',
          events: [ev('A'), ev('B')],
          actor: 'a',
        });
        await assert.rejects(
          store.append({ tenant: 'acme', streamId: 'c-1', expected: 'any', events: [ev('Poison')], actor: 'a' }),
          /projection failed/,
        );
        assert.deepEqual(await store.head('acme'), {
          position: 2,
          hash: (await store.readRows('acme', 1, 1))[0]!.hash,
        });
        const row = await store.pool.query(`SELECT n FROM "${readSchema(store.target.schema, 'acme')}".counts`);
        assert.equal(Number(row.rows[0].n), 2);
        assert.deepEqual(ok(await store.verify()), [['acme', true]]);
      } finally {
        await store.close();
      }
    }));

  it('refuses to change the log, and verify finds a tail removed behind its back', () =>
    withScratch(async (scratch) => {
      const store = await PgEventStore.open(scratch.url);
      const raw = await pgRaw(scratch);
      try {
        for (const tenant of ['acme', 'initech'])
          for (let i = 0; i < 3; i++)
            await store.append({
              tenant,
              streamId: 'c-1',
              expected: 'any',
              events: [ev('N', { i })],
              actor: 'a',
            });
        await store.append({ tenant: 'globex', streamId: 'c-1', expected: 'any', events: [ev('N')], actor: 'a' });
        await assert.rejects(raw.query(`UPDATE es_events SET data = '{}' WHERE position = 2`), /append-only/);
        await assert.rejects(raw.query('DELETE FROM es_events'), /append-only/);
        await raw.query('ALTER TABLE es_events DISABLE TRIGGER USER');
        await raw.query(`DELETE FROM es_events WHERE tenant = 'acme' AND position = 3`);
        // A reader taking the rows as the whole record (a node's copy) is told, not handed a short log.
        await assert.rejects(
          store.readRows('acme', 0, 10),
          (e: unknown) => isDomainError(e) && e.code === 'ErrChainBroken' && /position 3 is not there/.test(e.message),
        );
        assert.equal((await store.readRows('globex', 0, 10)).length, 1);
        // A hole the count misses: initech's row 2 gone, its row 3 as if appended after the head (2) was read — as
        // a reader without the lock can see it. The page holds 2 rows, as many as the head promised.
        await raw.query(`DELETE FROM es_events WHERE tenant = 'initech' AND position = 2`);
        await raw.query(`UPDATE es_chains SET position = 2 WHERE tenant = 'initech'`);
        await assert.rejects(
          store.readRows('initech', 0, 10),
          (e: unknown) => isDomainError(e) && e.code === 'ErrChainBroken' && /position 2 is not there/.test(e.message),
        );
        const cut = (await store.verify('acme')).get('acme')!;
        assert.equal(cut.ok, false);
        assert.match(
          !cut.ok ? cut.message : '',
          /ends at position 2 but commands recorded it up to 3: events were removed/,
        );
        await raw.query(`UPDATE es_events SET data = '{"i":9}' WHERE tenant = 'acme' AND position = 2`);
        const edited = (await store.verify('acme')).get('acme')!;
        assert.deepEqual(!edited.ok && [edited.position, edited.reason], [2, 'hash_mismatch']);
        assert.equal((await store.verify('globex')).get('globex')?.ok, true, 'another tenant is unaffected');
      } finally {
        await raw.end();
        await store.close();
      }
    }));

  it("reads a page of a tenant's rows without touching the rows after it, whatever plan PostgreSQL picks", () =>
    withScratch(async (scratch) => {
      const store = await PgEventStore.open(scratch.url);
      const raw = await pgRaw(scratch);
      try {
        for (let i = 0; i < 4; i++)
          await store.append({
            tenant: 'acme',
            streamId: `c-${i}`,
            expected: 'no_stream',
            events: Array.from({ length: 250 }, (_, j) => ev('N', { i, j })),
            actor: 'a',
          });
        const page = await store.readRows('acme', 300, 100);
        assert.deepEqual(
          page.map((r) => r.position),
          Array.from({ length: 100 }, (_, k) => 301 + k),
        );
        assert.equal((await store.readRows('acme', 950, 100)).length, 50, 'the last page is short');
        // The plan a tenant just moved in got (statistics that do not know its size): a bitmap scan and a sort.
        await raw.query('SET enable_indexscan = off');
        const [plan] = (await raw.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${TENANT_PAGE}`, ['acme', 300, 100])).rows[0][
          'QUERY PLAN'
        ] as { Plan: PlanNode }[];
        const read = (n: PlanNode): number => Math.max(n['Actual Rows'], ...(n.Plans ?? []).map(read));
        assert.equal(read(plan!.Plan), 100, 'no step of the plan handles more rows than the page');
      } finally {
        await raw.end();
        await store.close();
      }
    }));

  it('names an unreachable store or a bad URL plainly', async () => {
    await assert.rejects(
      PgEventStore.open('postgres://127.0.0.1:1/test'),
      (e: unknown) => isDomainError(e) && e.code === 'ErrStoreUnavailable' && /127\.0\.0\.1:1/.test(e.message),
    );
    await assert.rejects(PgEventStore.open('postgres://127.0.0.1/test?schema=Bad-Name'), /plain lowercase SQL name/);
    await assert.rejects(PgEventStore.open('mysql://127.0.0.1/test'), /must start with postgres/);
  });
});
