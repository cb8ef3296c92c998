import Database from 'better-sqlite3';
import type pg from 'pg';
import { handlesType, liveNames, type AnyProjection, type TableNames } from '../projection.js';
import { applySteps } from '../projection-sql.js';
import type { EventRow } from '../event.js';
import { toStoredEvent } from '../store.js';
import { readWholeTenantRows } from './rows.js';

/**
 * The bulk of a tenant's read-model rebuild on PostgreSQL, done where a projection is fastest: its
 * events are read from the store page by page and applied in an in-memory SQLite database — the same
 * definitions, SQLite's side of them (one definition per projection, engine/projection-sql.ts), every
 * projection so that one may read another's tables — and the tables asked for are then copied into the
 * PostgreSQL shadow tables in multi-row inserts. A statement per event and projection is a round trip
 * on PostgreSQL and a function call here: tens of times faster. The caller catches the shadow tables up
 * from `position` on PostgreSQL and swaps them in (pg/projections.ts).
 *
 * Full-text tables are the one shape that differs (FTS5 vs a table with a generated tsvector): both
 * hold `rowid, body, subject`, which is what is copied.
 */
const PAGE = 5000;
const ROWS_PER_INSERT = 500;

export async function buildInMemory(
  /** Each page and each insert commits on its own: no transaction stays open to hold back the store's ordered readers. */
  pool: pg.Pool,
  /** The tenant's read schema, which holds the shadow tables. */
  schema: string,
  tenant: string,
  projections: readonly AnyProjection[],
  targets: readonly { p: AnyProjection; t: TableNames<string> }[],
): Promise<{ position: number; events: number }> {
  const mem = new Database(':memory:');
  try {
    for (const p of projections) mem.exec(p.init(liveNames(p), 'sqlite'));
    // What a projection reads of the log itself (the streams projection: an event's hash by position).
    mem.exec('CREATE TABLE es_events (position INTEGER PRIMARY KEY, hash TEXT NOT NULL)');
    const logged = mem.prepare('INSERT INTO es_events (position, hash) VALUES (?, ?)');
    const apply = mem.transaction((rows: EventRow[]) => {
      for (const row of rows) {
        logged.run(row.position, row.hash);
        const e = toStoredEvent(row);
        for (const p of projections) if (handlesType(p, e.type)) applySteps(mem, p.apply(e, liveNames(p)));
      }
    });
    let position = 0;
    let events = 0;
    // A page short of the tenant's recorded head is a hole in the store, refused (ErrChainBroken), never
    // taken as the end: read models built from a prefix would be current-looking and wrong.
    for (;;) {
      const rows = await readWholeTenantRows(pool, tenant, position, PAGE);
      if (rows.length === 0) break;
      apply(rows);
      position = rows[rows.length - 1]!.position;
      events += rows.length;
    }
    for (const { p, t } of targets)
      for (const table of p.tables) await copyTable(mem, pool, table, `"${schema}"."${t[table]!}"`);
    return { position, events };
  } finally {
    mem.close();
  }
}

async function copyTable(mem: Database.Database, pool: pg.Pool, table: string, into: string): Promise<void> {
  const virtual = (
    mem.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).pluck().get(table) as string | undefined
  )?.startsWith('CREATE VIRTUAL TABLE');
  const select = mem.prepare(virtual ? `SELECT rowid, * FROM "${table}"` : `SELECT * FROM "${table}"`).raw();
  const columns = select.columns().map((c) => `"${c.name}"`);
  let batch: unknown[][] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const values = batch.map((_, r) => `(${columns.map((__, c) => `$${r * columns.length + c + 1}`).join(', ')})`);
    await pool.query(`INSERT INTO ${into} (${columns.join(', ')}) VALUES ${values.join(', ')}`, batch.flat());
    batch = [];
  };
  for (const row of select.iterate() as Iterable<unknown[]>) {
    batch.push(row.map((v) => (typeof v === 'bigint' ? v.toString() : v)));
    if (batch.length === ROWS_PER_INSERT) await flush();
  }
  await flush();
}
