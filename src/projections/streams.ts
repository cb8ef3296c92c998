import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { streamKind, type Event } from '../engine/event.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * The catalog of streams: one row per stream with its kind, version and first/last position and time.
 * It answers "which goals exist", "how many tasks" and "where does this stream start in the log"
 * without scanning the log, for every domain at once.
 */
export interface StreamRow {
  streamId: string;
  kind: string;
  version: number;
  firstPosition: number;
  lastPosition: number;
  lastType: string;
  createdAt: string;
  updatedAt: string;
}

const upsert = (table: string, hash: string) =>
  `INSERT INTO "${table}" (stream_id, kind, version, first_position, last_position, last_type, created_at, updated_at, last_hash)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${hash})
    ON CONFLICT(stream_id) DO UPDATE SET version = excluded.version, last_position = excluded.last_position,
      last_type = excluded.last_type, updated_at = excluded.updated_at, last_hash = excluded.last_hash`;

const sql = sqlFor((t: { streams: string }) => ({
  // The head's hash comes from the log row itself (a rowid lookup of the row just written): the event
  // object a projection sees carries no hash, and the checkpoints' stream heads need it (evidence/heads.ts).
  // On PostgreSQL the log holds every tenant's chain: the row is the read schema's tenant's (pg/projections.ts).
  upsert: {
    sqlite: upsert(t.streams, '(SELECT hash FROM es_events WHERE position = ?)'),
    postgres: upsert(
      t.streams,
      '(SELECT hash FROM es_events WHERE tenant = (SELECT tenant FROM rm_tenant) AND position = ?)',
    ),
  },
}));

export const streamsProjection: Projection<Event, 'streams'> = {
  name: 'streams',
  version: 2,
  handles: 'all',
  tables: ['streams'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.streams}" (
        stream_id      TEXT PRIMARY KEY,
        kind           TEXT NOT NULL,
        version        INTEGER NOT NULL,
        first_position INTEGER NOT NULL,
        last_position  INTEGER NOT NULL,
        last_type      TEXT NOT NULL,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL,
        last_hash      TEXT
      );
      CREATE INDEX IF NOT EXISTS "${t.streams}_by_kind" ON "${t.streams}" (kind, stream_id);
    `;
  },
  *apply(e, t) {
    yield run(
      sql(t).upsert,
      e.streamId,
      streamKind(e.streamId),
      e.version,
      e.position,
      e.position,
      e.type,
      e.recordedAt,
      e.recordedAt,
      e.position,
    );
  },
};

const SELECT = `SELECT stream_id AS streamId, kind, version, first_position AS firstPosition, last_position AS lastPosition,
  last_type AS lastType, created_at AS createdAt, updated_at AS updatedAt FROM streams`;

export function getStream(db: Database, streamId: string): StreamRow | null {
  return (prepared(db, `${SELECT} WHERE stream_id = ?`).get(streamId) as StreamRow | undefined) ?? null;
}

export function listStreams(db: Database, filter: { kind?: string; limit?: number } = {}): StreamRow[] {
  if (filter.kind !== undefined) {
    return prepared(db, `${SELECT} WHERE kind = ? ORDER BY stream_id LIMIT ?`).all(
      filter.kind,
      filter.limit ?? -1,
    ) as StreamRow[];
  }
  return prepared(db, `${SELECT} ORDER BY stream_id LIMIT ?`).all(filter.limit ?? -1) as StreamRow[];
}

export function countStreamsByKind(db: Database): Record<string, number> {
  const rows = prepared(db, 'SELECT kind, COUNT(*) AS n FROM streams GROUP BY kind ORDER BY kind').all() as {
    kind: string;
    n: number;
  }[];
  return Object.fromEntries(rows.map((r) => [r.kind, r.n]));
}
