import type { Database } from 'better-sqlite3';
import { deserialize, serialize } from 'node:v8';
import { prepared } from './db.js';
import { upcasterCount } from './upcasters.js';

/**
 * Stream snapshots: what keeps a cold load of a long stream (the first command after a start, or after
 * the per-process state cache evicted it) from folding its whole history. A stream gets a snapshot once
 * SNAPSHOT_EVERY events were folded past its last one; a load starts from the snapshot and folds only
 * the events after it, so no load ever folds much more than SNAPSHOT_EVERY events.
 *
 * A snapshot is a cache, never the truth: it is used only while the log still holds, at its version, the
 * event with its hash (a rolled-back write or a rewritten tail invalidates it; an accepted chain break
 * deletes them all, engine/anchor.ts), only for the decider name and version and the upcasters that wrote
 * it, and only if it deserializes. It is not covered by the hash chain: whoever can write the database
 * file can forge one, as they can forge the projections the other checks read. It is written in
 * the command's own transaction, so it commits or rolls back with the events it was folded from.
 * States are plain data (objects, arrays, Maps): node:v8 serialization keeps Maps, which JSON would not.
 */
export const SNAPSHOT_EVERY = 1_000;

export interface Snapshot<S> {
  version: number;
  hash: string;
  state: S;
}

// The upcasters shape what evolve sees: a snapshot folded before a new one was registered is another state.
const keyOf = (s: { name: string; version: number }): string => `${s.name}@${s.version}+u${upcasterCount()}`;

export function readSnapshot<S>(
  db: Database,
  streamId: string,
  decider: { name: string; version: number },
): Snapshot<S> | null {
  const row = prepared(db, 'SELECT version, hash, state FROM es_snapshots WHERE stream_id = ? AND decider = ?').get(
    streamId,
    keyOf(decider),
  ) as { version: number; hash: string; state: Buffer } | undefined;
  if (!row) return null;
  const held = prepared(db, 'SELECT hash FROM es_events WHERE stream_id = ? AND version = ?').get(
    streamId,
    row.version,
  ) as { hash: string } | undefined;
  if (held?.hash !== row.hash) return null;
  try {
    return { version: row.version, hash: row.hash, state: deserialize(row.state) as S };
  } catch {
    return null; // unreadable (another Node's format, damage): fold from the start instead
  }
}

/** Only inside a write transaction: a snapshot must never outlive the events it was folded from. */
export function writeSnapshot(
  db: Database,
  streamId: string,
  decider: { name: string; version: number },
  snapshot: Snapshot<unknown>,
): void {
  if (!db.inTransaction) return;
  prepared(
    db,
    `INSERT INTO es_snapshots (stream_id, decider, version, hash, state) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (stream_id, decider) DO UPDATE SET version = excluded.version, hash = excluded.hash, state = excluded.state`,
  ).run(streamId, keyOf(decider), snapshot.version, snapshot.hash, serialize(snapshot.state));
}
