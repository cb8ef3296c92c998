import type { Database } from 'better-sqlite3';
import { canonicalize } from '../canonical.js';
import { prepared } from './db.js';
import { EVENT_COLUMNS, type EventMeta, type EventRow } from './event.js';
import { GENESIS_HASH, rowHash } from './hash.js';
import { currentSchemaVersion } from './upcasters.js';

/**
 * The log of a fork: an origin event, then copies of chosen rows of another log, re-chained. A copy keeps
 * everything an event says — stream, type, stored schema version, data, meta (its command id, actor and
 * causation) and time — and gets a new position, a new stream version (the fork holds some events of a
 * stream, not all: versions count again from 1 without gaps) and new hashes, so the fork verifies on its
 * own while the origin log is only read. Domain-free: which rows to copy is the caller's choice.
 */
export interface OriginEvent {
  streamId: string;
  type: string;
  data: unknown;
  meta: EventMeta;
  recordedAt: string;
}

/** The rows of `streams` at or before `to`, in log order, exactly as stored. */
export function rowsOfStreams(db: Database, streams: readonly string[], to: number): EventRow[] {
  return prepared(
    db,
    `SELECT ${EVENT_COLUMNS} FROM es_events WHERE stream_id IN (SELECT value FROM json_each(?)) AND position <= ? ORDER BY position`,
  ).all(JSON.stringify(streams), to) as EventRow[];
}

/** The origin event first, then `rows` (in their log order), as one new chain from the genesis. */
export function forkRows(origin: OriginEvent, rows: readonly EventRow[]): EventRow[] {
  const versions = new Map<string, number>();
  const out: EventRow[] = [];
  let prev = { position: 0, hash: GENESIS_HASH };
  const push = (row: Omit<EventRow, 'position' | 'version' | 'prev_hash' | 'hash'>) => {
    const version = (versions.get(row.stream_id) ?? 0) + 1;
    versions.set(row.stream_id, version);
    const next: EventRow = { ...row, position: prev.position + 1, version, prev_hash: prev.hash, hash: '' };
    next.hash = rowHash(next);
    out.push(next);
    prev = { position: next.position, hash: next.hash };
  };
  push({
    stream_id: origin.streamId,
    type: origin.type,
    schema_version: currentSchemaVersion(origin.type),
    data: canonicalize(origin.data),
    meta: canonicalize(origin.meta),
    recorded_at: origin.recordedAt,
  });
  for (const r of rows)
    push({
      stream_id: r.stream_id,
      type: r.type,
      schema_version: r.schema_version,
      data: r.data,
      meta: r.meta,
      recorded_at: r.recorded_at,
    });
  return out;
}

/** The hash of the event at `position` (null past the end): what a fork names as the point it was cut at. */
export function hashAt(db: Database, position: number): string | null {
  const row = prepared(db, 'SELECT hash FROM es_events WHERE position = ?').get(position) as
    { hash: string } | undefined;
  return row?.hash ?? null;
}
