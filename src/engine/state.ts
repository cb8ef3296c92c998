import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import type { Event, EventRow } from './event.js';
import { upcast } from './upcasters.js';
import type { Decider } from './decider.js';
import { readSnapshot, SNAPSHOT_EVERY, writeSnapshot } from './snapshots.js';

/**
 * Folds a stream (upcasted) into a decider's state, optionally only up to version `to` (time travel
 * within a stream). Reads only the columns evolve needs: this is the hot path of every command.
 *
 * Busy streams (a team's #approvals, a long-lived goal) would be re-read from their first event by
 * every command, so the last state folded per (connection, decider, stream) is kept and only the
 * events after it are read. The entry is trusted only if the log still holds, at its version, the event
 * with the hash it was folded from: a rolled-back append, another process's commit or an import are all
 * caught by that one indexed lookup, and the state is then folded from the start again. States are
 * immutable (evolve returns new objects), so sharing one between commands is safe.
 *
 * Without a valid cached state, a decider that keeps snapshots starts from its stream's snapshot
 * (snapshots.ts), and a new one is written once SNAPSHOT_EVERY events were folded past the last: a long
 * stream's cold load folds at most about that many events, however long the stream is.
 */
interface Cached {
  version: number;
  hash: string;
  state: unknown;
  snapshotAt: number;
}
const MAX_STREAMS = 2_000;
const caches = new WeakMap<Database, WeakMap<object, Map<string, Cached>>>();

function cacheOf(db: Database, decider: object): Map<string, Cached> {
  let byDecider = caches.get(db);
  if (!byDecider) caches.set(db, (byDecider = new WeakMap()));
  let streams = byDecider.get(decider);
  if (!streams) byDecider.set(decider, (streams = new Map()));
  return streams;
}

/**
 * Events folded by loadState in this process, all streams together: what test/commands/bounded-state.test.ts
 * reads to hold commands to a constant number of folded events however long their streams grow.
 */
let folded = 0;
export const foldedEvents = (): number => folded;

type Row = Pick<EventRow, 'version' | 'type' | 'schema_version' | 'data' | 'hash'>;

export function loadState<S, E extends Event>(
  db: Database,
  decider: Decider<S, never, E>,
  streamId: string,
  to = Number.MAX_SAFE_INTEGER,
): { state: S; version: number } {
  const cache = to === Number.MAX_SAFE_INTEGER ? cacheOf(db, decider) : null;
  const hit = cache?.get(streamId);
  const valid =
    hit !== undefined &&
    (
      prepared(db, 'SELECT hash FROM es_events WHERE stream_id = ? AND version = ?').get(streamId, hit.version) as
        { hash: string } | undefined
    )?.hash === hit.hash;
  const snapshot = !valid && cache && decider.snapshot ? readSnapshot<S>(db, streamId, decider.snapshot) : null;
  const start = valid ? (hit as Cached) : snapshot ? { ...snapshot, snapshotAt: snapshot.version } : null;
  let state = start ? (start.state as S) : decider.initialState();
  let version = start?.version ?? 0;
  let hash = start?.hash ?? '';
  const rows = prepared(
    db,
    'SELECT version, type, schema_version, data, hash FROM es_events WHERE stream_id = ? AND version > ? AND version <= ? ORDER BY version',
  ).all(streamId, version, to) as Row[];
  folded += rows.length;
  for (const row of rows) {
    const { data } = upcast(row.type, row.schema_version, JSON.parse(row.data));
    state = decider.evolve(state, { type: row.type, data } as E);
    ({ version, hash } = row);
  }
  if (cache && version > 0 && (!valid || rows.length > 0)) {
    let snapshotAt = start?.snapshotAt ?? 0;
    if (decider.snapshot && version - snapshotAt >= SNAPSHOT_EVERY && db.inTransaction) {
      writeSnapshot(db, streamId, decider.snapshot, { version, hash, state });
      snapshotAt = version;
    }
    remember(cache, streamId, { version, hash, state, snapshotAt });
  }
  return { state, version };
}

function remember(cache: Map<string, Cached>, streamId: string, entry: Cached): void {
  cache.delete(streamId); // re-inserted last: the Map's order is the recency order
  cache.set(streamId, entry);
  if (cache.size > MAX_STREAMS) cache.delete(cache.keys().next().value!);
}
