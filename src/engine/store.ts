import { canonicalize } from '../canonical.js';
import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import { ConcurrencyError, invalidInput, type ExpectedVersion } from '../errors.js';
import {
  EVENT_COLUMNS,
  STORED_EVENT_COLUMNS,
  type Event,
  type EventMeta,
  type EventRow,
  type StoredEvent,
  type StoredEventRow,
} from './event.js';
import { GENESIS_HASH, rowHash } from './hash.js';
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

/** The last event's position and hash (0 and the genesis hash for an empty log). */
export function readHead(db: Database): ChainHead {
  const row = prepared(db, 'SELECT position, hash FROM es_events ORDER BY position DESC LIMIT 1').get() as
    ChainHead | undefined;
  return row ?? { position: 0, hash: GENESIS_HASH };
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
  /** The stream's version if the caller read it in this same transaction (saves a query). */
  currentVersion?: number,
): StoredEvent[] {
  if (!db.inTransaction) throw new Error('appendToStream must run inside a write transaction');
  const draft = draftAppend(streamId, events);
  const current = currentVersion ?? streamVersion(db, streamId);
  checkExpectedVersion(streamId, expected, current);
  const rows = chainRows(readHead(db), draft, current, meta, recordedAt);
  for (const row of rows) insertRow(db, row);
  return rows.map((row) => toStoredEvent(row, meta));
}

/** An append's events checked and serialized: everything that can be wrong with them, found before any write. */
export interface DraftAppend {
  streamId: string;
  events: readonly Event[];
  data: string[];
}

export function draftAppend(streamId: string, events: readonly Event[]): DraftAppend {
  checkText('stream id', streamId);
  // Everything is validated before the first insert, so a bad event never leaves its siblings behind.
  return { streamId, events, data: events.map((e) => (checkText('event type', e.type), canonicalJson(e))) };
}

/** The rows that continue the chain at `head` with the stream at version `current`: the same on every store. */
export function chainRows(
  head: ChainHead,
  draft: DraftAppend,
  current: number,
  meta: EventMeta,
  recordedAt: string,
): EventRow[] {
  const metaJson = canonicalize(meta);
  let prev = head;
  return draft.events.map((event, i) => {
    const row: EventRow = {
      position: prev.position + 1,
      stream_id: draft.streamId,
      version: current + i + 1,
      type: event.type,
      schema_version: currentSchemaVersion(event.type),
      data: draft.data[i]!,
      meta: metaJson,
      recorded_at: recordedAt,
      prev_hash: prev.hash,
      hash: '',
    };
    row.hash = rowHash(row);
    prev = { position: row.position, hash: row.hash };
    return row;
  });
}

/** SQLite stores text as UTF-8: a lone surrogate would be stored as U+FFFD and break the row's hash. */
function checkText(what: string, value: string): void {
  if (!value) throw invalidInput(`${what} must not be empty`);
  if (!value.isWellFormed()) throw invalidInput(`${what} contains a lone surrogate (not valid Unicode)`);
}

function canonicalJson(event: Event): string {
  try {
    return canonicalize(event.data ?? null);
  } catch (e) {
    throw invalidInput(`event ${event.type} has data that is not JSON: ${(e as Error).message}`);
  }
}

/** Parses a stored row and upcasts it to the current shape. `meta` may be passed when already known. */
/** Writes one event row as it is: the append and the import of an exported log store rows the same way. */
export function insertRow(db: Database, row: EventRow): void {
  prepared(db, `INSERT INTO es_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
    row.position,
    row.stream_id,
    row.version,
    row.type,
    row.schema_version,
    row.data,
    row.meta,
    row.recorded_at,
    row.prev_hash,
    row.hash,
  );
}

export function toStoredEvent(row: StoredEventRow, meta?: EventMeta): StoredEvent {
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
    meta: meta ?? (row.meta === undefined ? META_NOT_READ : (JSON.parse(row.meta) as EventMeta)),
    recordedAt: row.recorded_at,
  };
}

/**
 * What `meta` is when a rebuild skipped the column (no projection it runs declared `readsMeta`): one
 * shared object that fails loudly on use, so a projection that forgot the flag breaks its rebuild test
 * instead of reading nothing.
 */
const META_NOT_READ = new Proxy({} as EventMeta, {
  get(_target, key) {
    throw new Error(`event meta was not read (key ${String(key)}): a projection that reads meta must set readsMeta`);
  },
});

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
    `SELECT ${STORED_EVENT_COLUMNS} FROM es_events WHERE stream_id = ? AND version >= ? AND version <= ? ORDER BY version LIMIT ?`,
  ).all(streamId, options.from ?? 1, options.to ?? Number.MAX_SAFE_INTEGER, options.max ?? -1) as StoredEventRow[];
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
  return readPage<StoredEventRow>(db, STORED_EVENT_COLUMNS, options).map((r) => toStoredEvent(r));
}

/** Raw rows with their hashes, for verification and export. */
export function readAllRows(db: Database, options: ReadAllOptions = {}): EventRow[] {
  return readPage<EventRow>(db, EVENT_COLUMNS, options);
}

export function readPage<R>(db: Database, columns: string, options: ReadAllOptions): R[] {
  return prepared(
    db,
    `SELECT ${columns} FROM es_events WHERE position > ? AND position <= ? ORDER BY position LIMIT ?`,
  ).all(options.after ?? 0, options.to ?? Number.MAX_SAFE_INTEGER, options.limit ?? 1000) as R[];
}

/** Walks the log after `after` in pages, so memory stays flat however long the log is. */
export function* iterateAll(db: Database, options: ReadAllOptions = {}): Generator<StoredEvent> {
  let after = options.after ?? 0;
  for (;;) {
    const page = readAll(db, { ...options, after });
    for (const event of page) yield event;
    const last = page[page.length - 1];
    if (!last || page.length < (options.limit ?? 1000)) return;
    after = last.position;
  }
}
