import type { Database } from 'better-sqlite3';
import { prepared } from '../db.js';
import type { Event, EventRow } from '../events/event.js';
import { upcast } from '../events/upcasters.js';
import type { Decider } from './decider.js';

/**
 * Folds a stream (upcasted) into a decider's state, optionally only up to version `to` (time travel
 * within a stream). Reads only the columns evolve needs: this is the hot path of every command.
 */
export function loadState<S, E extends Event>(
  db: Database,
  decider: Decider<S, never, E>,
  streamId: string,
  to = Number.MAX_SAFE_INTEGER,
): { state: S; version: number } {
  const rows = prepared(
    db,
    'SELECT version, type, schema_version, data FROM es_events WHERE stream_id = ? AND version <= ? ORDER BY version',
  ).all(streamId, to) as Pick<EventRow, 'version' | 'type' | 'schema_version' | 'data'>[];
  let state = decider.initialState();
  for (const row of rows) {
    const { data } = upcast(row.type, row.schema_version, JSON.parse(row.data));
    state = decider.evolve(state, { type: row.type, data } as E);
  }
  return { state, version: rows[rows.length - 1]?.version ?? 0 };
}
