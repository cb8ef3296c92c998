import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PgProjection } from '../../../src/engine/pg/projections.js';
import { PgEventStore } from '../../../src/engine/pg/store.js';
import { isDomainError } from '../../../src/errors.js';
import { ev } from '../../helpers/event-log.js';
import { pgScratch, pgSkip } from '../../helpers/pg.js';

/** Read models on PostgreSQL: applied with the append, rebuilt into shadow tables while nodes append. */
function tenantCounts(version = 1, failOn?: string): PgProjection {
  return {
    name: 'tenant_counts',
    version,
    tables: ['tenant_counts'],
    async init(client, t) {
      await client.query(
        `CREATE TABLE "${t.tenant_counts}" (tenant text PRIMARY KEY, events int NOT NULL, last_position bigint NOT NULL)`,
      );
    },
    async apply(client, events, t) {
      if (failOn && events.some((e) => e.type === failOn)) throw new Error(`cannot project ${failOn}`);
      for (const e of events)
        await client.query(
          `INSERT INTO "${t.tenant_counts}" VALUES ($1, 1, $2)
           ON CONFLICT (tenant) DO UPDATE SET events = "${t.tenant_counts}".events + 1, last_position = excluded.last_position`,
          [e.tenant, e.position],
        );
    },
  };
}

async function counts(store: PgEventStore): Promise<[string, number, number][]> {
  const rows = await store.pool.query<{ tenant: string; events: number; last_position: string }>(
    'SELECT * FROM tenant_counts ORDER BY tenant',
  );
  return rows.rows.map((r) => [r.tenant, r.events, Number(r.last_position)]);
}

/** What the table must hold: computed from the log itself. */
async function fromLog(store: PgEventStore): Promise<[string, number, number][]> {
  const rows = await store.pool.query<{ tenant: string; n: number; last: string }>(
    'SELECT tenant, count(*)::int AS n, max(position) AS last FROM es_events GROUP BY tenant ORDER BY tenant',
  );
  return rows.rows.map((r) => [r.tenant, r.n, Number(r.last)]);
}

const append = (store: PgEventStore, tenant: string, type = 'N') =>
  store.append({ tenant, streamId: 's-1', expected: 'any', events: [ev(type)], actor: 'a' });

describe('projections on PostgreSQL', { skip: pgSkip }, () => {
  it('builds a new projection from the log on open, keeps it with every append, and rebuilds on a new version only', async () => {
    const scratch = pgScratch();
    try {
      const bare = await PgEventStore.open(scratch.url);
      for (const t of ['acme', 'globex', 'acme']) await append(bare, t);
      await bare.close();
      const store = await PgEventStore.open(scratch.url, { projections: [tenantCounts()] });
      assert.deepEqual(store.startupRebuild, { rebuilt: ['tenant_counts'], events: 3 });
      await append(store, 'globex');
      assert.deepEqual(await counts(store), await fromLog(store));
      await store.close();
      const same = await PgEventStore.open(scratch.url, { projections: [tenantCounts()] });
      assert.deepEqual(same.startupRebuild, { rebuilt: [], events: 0 });
      await same.close();
      const bumped = await PgEventStore.open(scratch.url, { projections: [tenantCounts(2)] });
      assert.deepEqual(bumped.startupRebuild, { rebuilt: ['tenant_counts'], events: 4 });
      assert.deepEqual(await counts(bumped), [
        ['acme', 2, 2],
        ['globex', 2, 2],
      ]);
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
      [1, 2].map(() => PgEventStore.open(scratch.url, { projections: [tenantCounts()], poolSize: 4 })),
    );
    try {
      for (let i = 0; i < 300; i++) await append(nodes[0]!, `t${i % 5}`);
      let writing = true;
      const writers = [0, 1, 2, 3].map(async (w) => {
        for (let i = 0; writing; i++) await append(nodes[w % 2]!, `t${(w + i) % 7}`);
      });
      const report = await nodes[1]!.rebuild();
      writing = false;
      await Promise.all(writers);
      assert.deepEqual(report.rebuilt, ['tenant_counts']);
      assert.ok(report.events >= 300);
      assert.deepEqual(await counts(nodes[0]!), await fromLog(nodes[0]!));
      const tables = await nodes[0]!.pool.query(
        `SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename LIKE '%rebuild%'`,
        [scratch.schema],
      );
      assert.deepEqual(tables.rows, [], 'no shadow table is left');
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
      await scratch.drop();
    }
  });

  it('keeps the live read model and drops the shadow when a rebuild fails', async () => {
    const scratch = pgScratch();
    try {
      const store = await PgEventStore.open(scratch.url, { projections: [tenantCounts()] });
      await append(store, 'acme');
      await append(store, 'acme', 'Odd');
      await store.close();
      await assert.rejects(
        PgEventStore.open(scratch.url, { projections: [tenantCounts(2, 'Odd')] }),
        /cannot project Odd/,
      );
      const again = await PgEventStore.open(scratch.url, { projections: [tenantCounts()] });
      assert.deepEqual(await counts(again), [['acme', 2, 2]]);
      const shadows = await again.pool.query(
        `SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename LIKE '%rebuild%'`,
        [scratch.schema],
      );
      assert.deepEqual(shadows.rows, []);
      await again.close();
    } finally {
      await scratch.drop();
    }
  });
});
