import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Event } from '../../../src/engine/event.js';
import type { Projection } from '../../../src/engine/projection.js';
import { run } from '../../../src/engine/projection-sql.js';
import { PgReadModels, readSchema } from '../../../src/engine/pg/projections.js';
import { PgEventStore } from '../../../src/engine/pg/store.js';
import { isDomainError } from '../../../src/errors.js';
import { ev } from '../../helpers/event-log.js';
import { pgRaw, pgScratch, pgSkip } from '../../helpers/pg.js';

/**
 * Read models on PostgreSQL: the projection definitions SQLite runs, each tenant's tables in its own
 * schema, applied with the append and rebuilt into shadow tables while nodes append.
 */
function streamCounts(version = 1, failOn?: string): Projection<Event, 'stream_counts'> {
  return {
    name: 'stream_counts',
    version,
    handles: 'all',
    tables: ['stream_counts'],
    init: (t) =>
      `CREATE TABLE IF NOT EXISTS "${t.stream_counts}" (stream_id TEXT PRIMARY KEY, events INTEGER NOT NULL, last_position INTEGER NOT NULL)`,
    *apply(e, t) {
      if (e.type === failOn) throw new Error(`cannot project ${failOn}`);
      yield run(
        `INSERT INTO "${t.stream_counts}" VALUES (?, 1, ?)
         ON CONFLICT (stream_id) DO UPDATE SET events = "${t.stream_counts}".events + 1, last_position = excluded.last_position`,
        e.streamId,
        e.position,
      );
    },
  };
}

type Count = [stream: string, events: number, last: number];

async function counts(store: PgEventStore, tenant: string): Promise<Count[]> {
  const rows = await store.pool.query<{ stream_id: string; events: string; last_position: string }>(
    `SELECT * FROM "${readSchema(store.target.schema, tenant)}".stream_counts ORDER BY stream_id`,
  );
  return rows.rows.map((r) => [r.stream_id, Number(r.events), Number(r.last_position)]);
}

/** What a tenant's table must hold: computed from its chain. */
async function fromLog(store: PgEventStore, tenant: string): Promise<Count[]> {
  const rows = await store.pool.query<{ stream_id: string; n: number; last: string }>(
    'SELECT stream_id, count(*)::int AS n, max(position) AS last FROM es_events WHERE tenant = $1 GROUP BY stream_id ORDER BY stream_id',
    [tenant],
  );
  return rows.rows.map((r) => [r.stream_id, r.n, Number(r.last)]);
}

const append = (store: PgEventStore, tenant: string, type = 'N', stream = 's-1') =>
  store.append({ tenant, streamId: stream, expected: 'any', events: [ev(type)], actor: 'a' });

async function shadowTables(store: PgEventStore): Promise<string[]> {
  const tables = await store.pool.query<{ name: string }>(
    `SELECT schemaname || '.' || tablename AS name FROM pg_tables WHERE schemaname LIKE $1 AND tablename LIKE '%rebuild%'`,
    [`${store.target.schema}%`],
  );
  return tables.rows.map((r) => r.name);
}

describe('projections on PostgreSQL', { skip: pgSkip }, () => {
  it("keeps each tenant's read models in its own schema: built on open, kept with every append, rebuilt on a new version only", async () => {
    const scratch = pgScratch();
    try {
      const bare = await PgEventStore.open(scratch.url);
      for (const t of ['acme', 'globex', 'acme']) await append(bare, t);
      await bare.close();
      const store = await PgEventStore.open(scratch.url, { projections: [streamCounts()] });
      assert.deepEqual(store.startupRebuild, { rebuilt: ['stream_counts'], events: 3 });
      await append(store, 'globex');
      await append(store, 'globex', 'N', 's-2');
      // The same stream id in two tenants: two rows, one in each tenant's schema.
      assert.deepEqual(await counts(store, 'acme'), [['s-1', 2, 2]]);
      assert.deepEqual(await counts(store, 'globex'), [
        ['s-1', 2, 2],
        ['s-2', 1, 3],
      ]);
      assert.notEqual(readSchema(scratch.schema, 'acme'), readSchema(scratch.schema, 'globex'));
      await store.close();
      const same = await PgEventStore.open(scratch.url, { projections: [streamCounts()] });
      assert.deepEqual(same.startupRebuild, { rebuilt: [], events: 0 });
      await same.close();
      const bumped = await PgEventStore.open(scratch.url, { projections: [streamCounts(2)] });
      assert.deepEqual(bumped.startupRebuild, { rebuilt: ['stream_counts'], events: 5 });
      for (const t of ['acme', 'globex']) assert.deepEqual(await counts(bumped, t), await fromLog(bumped, t));
      // A tenant's first append creates its read schema.
      await append(bumped, 'initech');
      assert.deepEqual(await counts(bumped, 'initech'), [['s-1', 1, 1]]);
      await assert.rejects(
        bumped.rebuild(['nope']),
        (e: unknown) => isDomainError(e) && /no projection named nope/.test(e.message),
      );
      await bumped.close();
    } finally {
      await scratch.drop();
    }
  });

  it('misses nothing that other nodes append during a rebuild', async () => {
    const scratch = pgScratch();
    const nodes = await Promise.all(
      [1, 2].map(() => PgEventStore.open(scratch.url, { projections: [streamCounts()], poolSize: 4 })),
    );
    const tenants = ['t0', 't1', 't2'];
    try {
      for (let i = 0; i < 300; i++) await append(nodes[0]!, tenants[i % 3]!, 'N', `s-${i % 4}`);
      let writing = true;
      const writers = [0, 1, 2, 3].map(async (w) => {
        for (let i = 0; writing; i++) await append(nodes[w % 2]!, tenants[(w + i) % 3]!, 'N', `s-${i % 5}`);
      });
      const report = await nodes[1]!.rebuild();
      writing = false;
      await Promise.all(writers);
      assert.deepEqual(report.rebuilt, ['stream_counts']);
      assert.ok(report.events >= 300);
      for (const t of tenants) assert.deepEqual(await counts(nodes[0]!, t), await fromLog(nodes[0]!, t));
      assert.deepEqual(await shadowTables(nodes[0]!), [], 'no shadow table is left');
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
      await scratch.drop();
    }
  });

  it('keeps the live read model and drops the shadow when a rebuild fails', async () => {
    const scratch = pgScratch();
    try {
      const store = await PgEventStore.open(scratch.url, { projections: [streamCounts()] });
      await append(store, 'acme');
      await append(store, 'acme', 'Odd');
      await store.close();
      await assert.rejects(
        PgEventStore.open(scratch.url, { projections: [streamCounts(2, 'Odd')] }),
        /cannot project Odd/,
      );
      const again = await PgEventStore.open(scratch.url, { projections: [streamCounts()] });
      assert.deepEqual(await counts(again, 'acme'), [['s-1', 2, 2]]);
      assert.deepEqual(await shadowTables(again), []);
      // A projection that throws fails the append, and nothing of it is written.
      const failing = await PgEventStore.open(scratch.url, { projections: [streamCounts(1, 'Bad')] });
      await assert.rejects(append(failing, 'acme', 'Bad'), /cannot project Bad/);
      assert.equal((await failing.head('acme')).position, 2);
      await failing.close();
      await again.close();
    } finally {
      await scratch.drop();
    }
  });
  it('refuses to rebuild from a store that lost rows, in the middle or after the last, and keeps the live tables', async () => {
    const scratch = pgScratch();
    try {
      const store = await PgEventStore.open(scratch.url, { projections: [streamCounts()] });
      for (const t of ['acme', 'acme', 'acme', 'globex', 'globex', 'globex']) await append(store, t);
      await store.close();
      // Rows deleted behind the store's back (its append-only triggers off): a hole in acme, globex's tail.
      const raw = await pgRaw(scratch);
      try {
        await raw.query('ALTER TABLE es_events DISABLE TRIGGER USER');
        await raw.query(`DELETE FROM es_events WHERE (tenant, position) IN (('acme', 2), ('globex', 3))`);
      } finally {
        await raw.end();
      }
      const refused = (position: number, tenant: string) => (e: unknown) =>
        isDomainError(e) &&
        e.code === 'ErrChainBroken' &&
        e.message.includes(`tenant "${tenant}"`) &&
        e.message.includes(`position ${position} is not there`) &&
        e.message.includes('up to 3');
      // A bumped projection rebuilds every tenant on open: acme's hole stops it before anything is swapped.
      await assert.rejects(PgEventStore.open(scratch.url, { projections: [streamCounts(2)] }), refused(2, 'acme'));
      const again = await PgEventStore.open(scratch.url, { projections: [streamCounts()] });
      try {
        assert.deepEqual(
          await counts(again, 'acme'),
          [['s-1', 3, 3]],
          'the live table is the one built with the appends',
        );
        assert.deepEqual(await shadowTables(again), []);
        await assert.rejects(again.rebuild(['stream_counts']), refused(2, 'acme'));
        // globex alone: nothing is missing before its last row, whose absence is no longer "caught up".
        const models = new PgReadModels(scratch.schema, [streamCounts(3)], () => 'BEGIN');
        await assert.rejects(models.prepare(again.pool, 'globex'), refused(3, 'globex'));
        assert.deepEqual(await counts(again, 'globex'), [['s-1', 3, 3]]);
      } finally {
        await again.close();
      }
    } finally {
      await scratch.drop();
    }
  });
});

describe('read model names on PostgreSQL', () => {
  it("refuses a table named like the store's own, which shares the search_path", () => {
    const named = (table: string): Projection<Event, string> => ({ ...streamCounts(), tables: [table] });
    for (const table of ['es_events', 'rm_projections'])
      assert.throws(() => new PgReadModels('colony', [named(table)], () => 'BEGIN'), /es_\* and rm_\* are the store's/);
    assert.doesNotThrow(() => new PgReadModels('colony', [named('stream_counts')], () => 'BEGIN'));
  });
});
