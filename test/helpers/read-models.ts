import type { Database } from 'better-sqlite3';
import assert from 'node:assert/strict';
import type pg from 'pg';
import type { AnyProjection } from '../../src/engine/projection.js';
import { productProjections } from '../../src/app.js';
import { READ_MODEL_TYPES } from '../../src/engine/pg/projection-driver.js';
import { readSchema } from '../../src/engine/pg/projections.js';
import type { PgEventStore } from '../../src/engine/pg/store.js';

/**
 * Every row of every table of the projections, as plain values in a stable order, so read models built
 * on SQLite and on PostgreSQL (or incrementally and by a rebuild) can be compared with deepEqual. Full-
 * text tables compare by their text (SQLite's FTS5 keeps its rowid apart; PostgreSQL's keeps a tsvector
 * column the other has no counterpart for).
 */
export type Tables = Record<string, unknown[]>;

const ORDER = (a: unknown, b: unknown): number => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1);

export function sqliteTables(db: Database, projections: readonly AnyProjection[]): Tables {
  const out: Tables = {};
  for (const p of projections) {
    for (const table of p.tables as string[]) {
      const fts = isFts(table);
      const rows = db.prepare(fts ? `SELECT rowid, body, subject FROM "${table}"` : `SELECT * FROM "${table}"`).all();
      out[table] = rows.map(normal).sort(ORDER);
    }
  }
  return out;
}

export async function pgTables(
  client: pg.ClientBase | pg.Pool,
  schema: string,
  projections: readonly AnyProjection[],
): Promise<Tables> {
  const out: Tables = {};
  for (const p of projections) {
    for (const table of p.tables as string[]) {
      const columns = isFts(table) ? 'rowid, body, subject' : '*';
      const result = await client.query({
        text: `SELECT ${columns} FROM "${schema}"."${table}"`,
        types: READ_MODEL_TYPES,
      });
      out[table] = result.rows.map(normal).sort(ORDER);
    }
  }
  return out;
}

const isFts = (table: string): boolean => table.endsWith('_fts');

function normal(row: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row as Record<string, unknown>).map(([k, v]) => [k, json(v)]));
}

/** JSON text compares by value (PostgreSQL and SQLite may space it differently). */
function json(value: unknown): unknown {
  if (typeof value !== 'string' || !/^[[{]/.test(value)) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** A tenant's product read models on PostgreSQL equal what a rebuild from its chain gives. */
export async function assertRebuildEqual(store: PgEventStore, tenant: string): Promise<void> {
  const schema = readSchema(store.target.schema, tenant);
  const live = await pgTables(store.pool, schema, productProjections);
  await store.rebuild([], tenant);
  assert.deepEqual(await pgTables(store.pool, schema, productProjections), live, 'read models equal a rebuild');
}
