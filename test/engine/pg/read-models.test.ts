import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openApp, productProjections } from '../../../src/app.js';
import { fixedClock } from '../../../src/clock.js';
import { readAllRows } from '../../../src/engine/store.js';
import { readSchema } from '../../../src/engine/pg/projections.js';
import { PgEventStore } from '../../../src/engine/pg/store.js';
import { domainTour } from '../../helpers/domain-tour.js';
import { pgScratch, pgSkip } from '../../helpers/pg.js';
import { pgTables, sqliteTables } from '../../helpers/read-models.js';

/**
 * The product's read models, one definition on both stores: the domain tour's log (every event type the
 * read models handle, text with quotes and non-Latin scripts) projected on PostgreSQL gives the rows SQLite
 * gives, table for table — and so does a rebuild on PostgreSQL.
 */
describe("the product's read models on PostgreSQL", { skip: pgSkip }, () => {
  it('equal the SQLite ones after the domain tour, applied with the appends and rebuilt', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'colony-pg-tour-'));
    const clock = fixedClock('2026-03-01T09:00:00.000Z', 1000);
    const app = openApp({ dataDir, durability: 'normal', clock });
    const scratch = pgScratch();
    const store = await PgEventStore.open(scratch.url, { projections: productProjections, clock });
    try {
      domainTour(app, clock);
      const db = app.engine.db;
      const rows = readAllRows(db, { after: 0, limit: 1_000_000 });
      // In slices, as migrate copies: each slice is projected in its own transaction.
      for (let i = 0; i < rows.length; i += 97) await store.importRows('tour', rows.slice(i, i + 97));
      const want = sqliteTables(db, productProjections);
      const schema = readSchema(scratch.schema, 'tour');
      const got = await pgTables(store.pool, schema, productProjections);
      for (const table of Object.keys(want)) {
        assert.ok(want[table]!.length > 0, `the tour leaves rows in ${table}`);
        assert.deepEqual(got[table], want[table], table);
      }
      const report = await store.rebuild();
      assert.equal(report.events, rows.length);
      assert.deepEqual(await pgTables(store.pool, schema, productProjections), want, 'after a rebuild');
    } finally {
      await store.close();
      await scratch.drop();
      app.engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
