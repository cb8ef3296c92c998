import type { EventRow } from './event.js';
import type { Expectation, RecordedWrite } from './replica-record.js';
import type { ChainHead } from './store.js';

/** The store of record a node's copy writes through (engine/replica.ts), as the copy sees it. */
export interface Primary {
  /** Where the record is, for people — agents included: the store's kind and names, never its address or user. */
  readonly where: string;
  /** Takes the tenant's write lock and answers what it committed after `after` (which must be its own row). */
  lock(after: ChainHead): PrimaryState;
  /** Writes and commits under the lock, releasing it. */
  commit(write: PrimaryWrite): void;
  /** Without the lock: takes it, writes and commits if the store is as expected, else ErrWriteConflict. */
  write(expect: Expectation, write: PrimaryWrite): void;
  /** Releases the lock, writing nothing. Never throws. */
  rollback(): void;
  /** The tenant's rows after a position, without the lock (start-up and the follower). */
  rows(afterPosition: number, limit: number): EventRow[];
  /** Under the lock: the recorded commands whose id is `prefix` or starts with it (idempotency keys). */
  commands(prefix: string): CommandRecord[];
  /** The tenant's signed checkpoints numbered after `n`, and one signed here, kept beside its log. */
  checkpoints(afterN: number): CheckpointRecord[];
  saveCheckpoint(checkpoint: CheckpointRecord): void;
  close(): void;
}

export interface PrimaryState {
  rows: EventRow[];
  sequences: Array<[string, number]>;
}

export interface CommandRecord {
  command_id: string;
  first_position: number | null;
  last_position: number | null;
  committed_at: string;
}

/** A row of es_checkpoints (engine/schema.ts), the same on both stores. */
export interface CheckpointRecord {
  n: number;
  tree_size: number;
  key_id: string;
  body: string;
  signature: string;
  public_key: string;
  reason: string;
}

export const CHECKPOINT_COLUMNS = 'n, tree_size, key_id, body, signature, public_key, reason';

export interface PrimaryWrite {
  rows: EventRow[];
  /** Keyed commands that decided nothing: recorded so a retry on any node answers alike. */
  empty: Array<{ id: string; at: string }>;
  sequences: Array<[string, number]>;
  at: string;
  /** The copy's read-model writes, which the primary repeats (replica-record.ts). */
  writes: RecordedWrite[];
}
