/**
 * The shapes of events. A domain declares its events as a discriminated union of `Event<Type, Data>`;
 * the store adds the log's facts (position, stream, version, meta, time) to make a `StoredEvent`.
 * Data is JSON-safe only (ISO strings, not Dates), so a stored event and a replayed one compare equal.
 */
export interface Event<T extends string = string, D = unknown> {
  readonly type: T;
  readonly data: D;
}

/** Who did it and why: every event of one command carries the same meta. */
export interface EventMeta {
  readonly commandId: string;
  readonly actor: string;
  readonly causationId: string | null;
  readonly correlationId: string | null;
}

export type StoredEvent<E extends Event = Event> = E & {
  /** Global, gap-free position in the log, starting at 1. */
  readonly position: number;
  readonly streamId: string;
  /** Version within the stream, starting at 1. */
  readonly version: number;
  /** The schema version after upcasting (what the data now has), not necessarily the stored one. */
  readonly schemaVersion: number;
  readonly meta: EventMeta;
  readonly recordedAt: string;
};

/** The raw row of `es_events`, exactly as stored (data and meta are canonical JSON text). */
export interface EventRow {
  position: number;
  stream_id: string;
  version: number;
  type: string;
  schema_version: number;
  data: string;
  meta: string;
  recorded_at: string;
  prev_hash: string;
  hash: string;
}

export const EVENT_COLUMNS =
  'position, stream_id, version, type, schema_version, data, meta, recorded_at, prev_hash, hash';

/** The columns a StoredEvent is made of: the hashes stay in the log (verify and export read rows). */
export const STORED_EVENT_COLUMNS = 'position, stream_id, version, type, schema_version, data, meta, recorded_at';
export type StoredEventRow = Omit<EventRow, 'prev_hash' | 'hash' | 'meta'> & { meta?: string };

/** The same without meta: what a rebuild reads when no projection it runs reads meta. */
export const STORED_EVENT_COLUMNS_NO_META = 'position, stream_id, version, type, schema_version, data, recorded_at';

/** `goal-7` → `goal`; streams are named `<kind>-<id>`. */
export function streamKind(streamId: string): string {
  const dash = streamId.lastIndexOf('-');
  return dash > 0 ? streamId.slice(0, dash) : streamId;
}

/** `task-7` → {kind: 'task', id: 7}: the integer id a stream's name carries, or null when it has none. */
export function streamSequence(streamId: string): { kind: string; id: number } | null {
  const id = Number(streamId.slice(streamId.lastIndexOf('-') + 1));
  const kind = streamKind(streamId);
  return Number.isSafeInteger(id) && id > 0 && kind !== streamId ? { kind, id } : null;
}
