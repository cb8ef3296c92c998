import type { Database } from 'better-sqlite3';
import { migrate, openDatabase } from '../../src/engine/db.js';
import type { ExpectedVersion } from '../../src/errors.js';
import { EVENT_COLUMNS, type Event, type EventMeta, type EventRow, type StoredEvent } from '../../src/engine/event.js';
import { GENESIS_HASH, rowHash } from '../../src/engine/hash.js';
import { engineMigrations } from '../../src/engine/schema.js';
import { appendToStream, readHead } from '../../src/engine/store.js';

/**
 * Store-level helpers: a bare database with the engine's schema (no projections, no engine), appends in
 * their own transaction, raw rows as stored, and hand-built rows that continue the hash chain.
 */
export const AT = '2026-01-01T00:00:00.000Z';

export function storeDb(): Database {
  const db = openDatabase(':memory:');
  migrate(db, engineMigrations);
  return db;
}

export const meta = (commandId = 'cmd-1', actor = 'tester'): EventMeta => ({
  commandId,
  actor,
  causationId: null,
  correlationId: null,
});

/** Appends in one IMMEDIATE transaction of its own, as a command would. */
export function append(
  db: Database,
  streamId: string,
  expected: ExpectedVersion,
  events: readonly Event[],
  m: EventMeta = meta(),
  at = AT,
): StoredEvent[] {
  return db.transaction(() => appendToStream(db, streamId, expected, events, m, at)).immediate();
}

export const ev = (type: string, data: unknown = {}): Event => ({ type, data });

export const rawRows = (db: Database): EventRow[] =>
  db.prepare(`SELECT ${EVENT_COLUMNS} FROM es_events ORDER BY position`).all() as EventRow[];

export const rawRow = (db: Database, position: number): EventRow =>
  db.prepare(`SELECT ${EVENT_COLUMNS} FROM es_events WHERE position = ?`).get(position) as EventRow;

export const countEvents = (db: Database): number =>
  (db.prepare('SELECT COUNT(*) AS n FROM es_events').get() as { n: number }).n;

/** What an attacker with file access does first. */
export function dropAppendOnlyTriggers(db: Database): void {
  db.exec('DROP TRIGGER es_events_no_update; DROP TRIGGER es_events_no_delete;');
}

export type RowFields = Omit<EventRow, 'hash' | 'prev_hash' | 'position'> &
  Partial<Pick<EventRow, 'prev_hash' | 'position'>>;

/** A correctly hashed row that continues `after` (default: the genesis) — what an exporter would emit. */
export function chainRow(
  fields: RowFields,
  after: { position: number; hash: string } = { position: 0, hash: GENESIS_HASH },
): EventRow {
  const row: EventRow = {
    position: after.position + 1,
    prev_hash: after.hash,
    ...fields,
    hash: '',
  };
  row.hash = rowHash(row);
  return row;
}

/** Builds a chain of rows from field lists, each linked to the one before (starting at `after`). */
export function chainRows(fields: readonly RowFields[], after = { position: 0, hash: GENESIS_HASH }): EventRow[] {
  const rows: EventRow[] = [];
  let head = after;
  for (const f of fields) {
    const row = chainRow(f, head);
    rows.push(row);
    head = { position: row.position, hash: row.hash };
  }
  return rows;
}

/**
 * Re-hashes every row from `position` to the end (as an attacker covering an edit would) and returns the
 * new last hash. The triggers must have been dropped.
 */
export function rehashFrom(db: Database, position: number): string {
  let prev = position === 1 ? GENESIS_HASH : rawRow(db, position - 1).hash;
  const update = db.prepare('UPDATE es_events SET prev_hash = ?, hash = ? WHERE position = ?');
  for (const row of rawRows(db).filter((r) => r.position >= position)) {
    const hash = rowHash({ ...row, prev_hash: prev });
    update.run(prev, hash, row.position);
    prev = hash;
  }
  return prev;
}

export { readHead };
