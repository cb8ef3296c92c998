import { canonicalize } from 'json-canonicalize';
import type { Database } from 'better-sqlite3';
import { prepared } from '../db.js';
import { ConcurrencyError, DomainError, invalidInput, type ExpectedVersion } from '../errors.js';
import { EVENT_COLUMNS, type Event, type EventMeta, type EventRow, type StoredEvent } from './event.js';
import { rowHash } from './hash.js';
import { currentSchemaVersion, hasUpcasters, upcast } from './upcasters.js';

/**
 * The event store: append with an expected version, read a stream, read the log after a position.
 * Every function is synchronous and runs on the caller's connection; `appendToStream` must run inside
 * the caller's write transaction (the command's), which is what makes a command atomic.
 */

export interface ChainHead {
  position: number;
  hash: string;
}

export function readHead(db: Database): ChainHead {
  return prepared(db, 'SELECT position, hash FROM es_head WHERE id = 1').get() as ChainHead;
}

/** The stream's current version, 0 when it has no events. */
export function streamVersion(db: Database, streamId: string): number {
  const row = prepared(db, 'SELECT MAX(version) AS v FROM es_events WHERE stream_id = ?').get(streamId) as {
    v: number | null;
  };
  return row.v ?? 0;
}

export function checkExpectedVersion(streamId: string, expected: ExpectedVersion, actual: number): void {
  const ok = expected === 'any' || (expected === 'no_stream' ? actual === 0 : expected === actual);
  if (!ok) throw new ConcurrencyError(streamId, expected, actual);
}

export function appendToStream(
  db: Database,
  streamId: string,
  expected: ExpectedVersion,
  events: readonly Event[],
  meta: EventMeta,
  recordedAt: string,
): StoredEvent[] {
  if (!db.inTransaction) throw new Error('appendToStream must run inside a write transaction');
  if (!streamId) throw invalidInput('stream id must not be empty');
  const current = streamVersion(db, streamId);
  checkExpectedVersion(streamId, expected, current);
  const insert = prepared(db, `INSERT INTO es_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const metaJson = canonicalize(meta);
  let head = readHead(db);
  const stored: StoredEvent[] = [];
  events.forEach((event, i) => {
    const row: EventRow = {
      position: head.position + 1,
      stream_id: streamId,
      version: current + i + 1,
      type: event.type,
      schema_version: currentSchemaVersion(event.type),
      data: canonicalJson(event),
      meta: metaJson,
      recorded_at: recordedAt,
      prev_hash: head.hash,
      hash: '',
    };
    row.hash = rowHash(row);
    insert.run(row.position, row.stream_id, row.version, row.type, row.schema_version, row.data, row.meta,
      row.recorded_at, row.prev_hash, row.hash);
    stored.push(toStoredEvent(row, meta));
    head = { position: row.position, hash: row.hash };
  });
  if (events.length > 0) prepared(db, 'UPDATE es_head SET position = ?, hash = ? WHERE id = 1').run(head.position, head.hash);
  return stored;
}

function canonicalJson(event: Event): string {
  try {
    return canonicalize(event.data ?? null);
  } catch (e) {
    throw invalidInput(`event ${event.type} has data that is not JSON: ${(e as Error).message}`);
  }
}

/** Parses a stored row and upcasts it to the current shape. `meta` may be passed when already known. */
export function toStoredEvent(row: EventRow, meta?: EventMeta): StoredEvent {
  let data: unknown = JSON.parse(row.data);
  let schemaVersion = row.schema_version;
  if (hasUpcasters(row.type)) ({ schemaVersion, data } = upcast(row.type, schemaVersion, data));
  return {
    type: row.type,
    data,
    position: row.position,
    streamId: row.stream_id,
    version: row.version,
    schemaVersion,
    meta: meta ?? (JSON.parse(row.meta) as EventMeta),
    recordedAt: row.recorded_at,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

export interface ReadStreamOptions {
  /** First version to read (inclusive), default 1. */
  from?: number;
  /** Last version to read (inclusive), default the end. */
  to?: number;
  /** At most this many events. */
  max?: number;
}

export function readStream(db: Database, streamId: string, options: ReadStreamOptions = {}): StoredEvent[] {
  const rows = prepared(
    db,
    `SELECT ${EVENT_COLUMNS} FROM es_events WHERE stream_id = ? AND version >= ? AND version <= ? ORDER BY version LIMIT ?`,
  ).all(streamId, options.from ?? 1, options.to ?? Number.MAX_SAFE_INTEGER, options.max ?? -1) as EventRow[];
  return rows.map((r) => toStoredEvent(r));
}

export interface ReadAllOptions {
  /** Read events with a position strictly greater than this (default 0: from the start). */
  after?: number;
  /** Page size (default 1000). */
  limit?: number;
  /** Stop at this position (inclusive). */
  to?: number;
}

export function readAll(db: Database, options: ReadAllOptions = {}): StoredEvent[] {
  return readAllRows(db, options).map((r) => toStoredEvent(r));
}

export function readAllRows(db: Database, options: ReadAllOptions = {}): EventRow[] {
  return prepared(
    db,
    `SELECT ${EVENT_COLUMNS} FROM es_events WHERE position > ? AND position <= ? ORDER BY position LIMIT ?`,
  ).all(options.after ?? 0, options.to ?? Number.MAX_SAFE_INTEGER, options.limit ?? 1000) as EventRow[];
}

/** Walks the log after `after` in pages, so memory stays flat however long the log is. */
export function* iterateAll(db: Database, options: ReadAllOptions = {}): Generator<StoredEvent> {
  let after = options.after ?? 0;
  for (;;) {
    const page = readAllRows(db, { ...options, after });
    for (const row of page) yield toStoredEvent(row);
    const last = page[page.length - 1];
    if (!last || page.length < (options.limit ?? 1000)) return;
    after = last.position;
  }
}

/** The events a command id appended, in order; empty when it never committed. */
export function eventsOfCommand(db: Database, commandId: string): StoredEvent[] {
  const rows = prepared(
    db,
    `SELECT ${EVENT_COLUMNS} FROM es_events WHERE json_extract(meta, '$.commandId') = ? ORDER BY position`,
  ).all(commandId) as EventRow[];
  return rows.map((r) => toStoredEvent(r));
}

/**
 * Appends rows exactly as given — hashes, schema versions, meta and all — for restoring an exported
 * log or loading a golden fixture. Each row must continue the chain: the next position, a prev_hash
 * equal to the head's hash, a hash that matches its content, and the next version of its stream.
 * Runs inside the caller's transaction; the first bad row throws and nothing is kept.
 */
export function importRows(db: Database, rows: readonly EventRow[]): StoredEvent[] {
  if (!db.inTransaction) throw new Error('importRows must run inside a write transaction');
  const insert = prepared(db, `INSERT INTO es_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  let head = readHead(db);
  const stored: StoredEvent[] = [];
  for (const row of rows) {
    const problem =
      row.position !== head.position + 1 ? `position ${row.position} does not follow the head ${head.position}`
      : row.prev_hash !== head.hash ? `prev_hash of position ${row.position} does not match the head's hash`
      : rowHash(row) !== row.hash ? `hash of position ${row.position} does not match its content`
      : row.version !== streamVersion(db, row.stream_id) + 1 ? `version ${row.version} of ${row.stream_id} is out of sequence`
      : null;
    if (problem) throw new DomainError('ErrChainMismatch', problem, { position: row.position });
    insert.run(row.position, row.stream_id, row.version, row.type, row.schema_version, row.data, row.meta,
      row.recorded_at, row.prev_hash, row.hash);
    stored.push(toStoredEvent(row));
    head = { position: row.position, hash: row.hash };
  }
  if (rows.length > 0) prepared(db, 'UPDATE es_head SET position = ?, hash = ? WHERE id = 1').run(head.position, head.hash);
  return stored;
}
