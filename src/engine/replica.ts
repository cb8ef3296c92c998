import type { Database } from 'better-sqlite3';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { importRows } from './command-log.js';
import { prepared } from './db.js';
import type { EventRow, StoredEvent } from './event.js';
import { sequenceMarks } from './ids.js';
import type { ProjectionRegistry } from './projection-registry.js';
import { readAllRows, readHead, type ChainHead } from './store.js';

/**
 * A replica: this process's SQLite database as a copy of one tenant of a primary store (PostgreSQL) that
 * every node writes through. The domain code stays what it is on SQLite — synchronous commands that read
 * the projections and append — and the primary stays the one record:
 *
 *  - a write transaction (one command, or one group-commit batch) first takes the tenant's write lock on
 *    the primary and brings in what other nodes committed since this copy's head, inside the local
 *    transaction (`begin`); the command then decides on facts no other node can change until it ends;
 *  - before the local COMMIT, the rows it appended, the keyed commands that appended nothing and the id
 *    high-water marks go to the primary, which checks that they continue its chain and commits (`commit`);
 *  - a failure anywhere rolls back both sides (`abort`). A local COMMIT that fails after the primary's
 *    leaves this copy behind, never ahead: the next `begin` (or the follower) brings the rows in again.
 *
 * The copy is a cache: it can be deleted, and is rebuilt from the primary when a node starts.
 */
export interface Primary {
  /** Where the record is, for people — agents included: the store's kind and names, never its address or user. */
  readonly where: string;
  /** Takes the tenant's write lock and answers what it committed after `after` (which must be its own row). */
  lock(after: ChainHead): PrimaryState;
  /** Writes and commits under the lock, releasing it. */
  commit(write: PrimaryWrite): void;
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

const CHECKPOINT_COLUMNS = 'n, tree_size, key_id, body, signature, public_key, reason';

export interface PrimaryWrite {
  rows: EventRow[];
  /** Keyed commands that decided nothing: recorded so a retry on any node answers alike. */
  empty: Array<{ id: string; at: string }>;
  sequences: Array<[string, number]>;
  at: string;
}

export class Replica {
  /** The local head when the lock was taken and what came in; null while no lock is held. */
  private held: { from: number; empty: PrimaryWrite['empty'] } | null = null;

  constructor(
    readonly primary: Primary,
    private readonly db: Database,
    private readonly projections: ProjectionRegistry,
    private readonly clock: Clock,
  ) {}

  /** Inside the local write transaction: takes the primary's lock and imports what others committed. */
  begin(): StoredEvent[] {
    if (this.held) throw new Error('the replica already holds the primary lock');
    const { rows, sequences } = this.primary.lock(readHead(this.db));
    try {
      const events = this.bringIn(rows);
      raiseMarks(this.db, sequences);
      this.held = { from: readHead(this.db).position, empty: [] };
      return events;
    } catch (e) {
      this.primary.rollback();
      throw e;
    }
  }

  /** A keyed command that appended nothing, recorded locally: the primary records it with the rest. */
  noteEmpty(id: string, at: string): void {
    this.held?.empty.push({ id, at });
  }

  /**
   * Under the lock, before a keyed command checks its id: the primary's records of that id (or of its
   * idempotency key's scope), so a retry on this node is answered as on the node that ran it first — the
   * rows brought in carry the records of commands that appended events, not of those that decided nothing.
   */
  bringCommands(prefix: string): void {
    if (!this.held) return;
    const insert = prepared(
      this.db,
      'INSERT OR IGNORE INTO es_commands (command_id, first_position, last_position, committed_at) VALUES (?, ?, ?, ?)',
    );
    for (const c of this.primary.commands(prefix))
      insert.run(c.command_id, c.first_position, c.last_position, c.committed_at);
  }

  /** Before the local COMMIT: the primary takes what this transaction appended and commits. */
  commit(): void {
    const held = this.held;
    if (!held) return;
    this.held = null;
    const rows: EventRow[] = [];
    for (let page = readAllRows(this.db, { after: held.from, limit: 5000 }); page.length;) {
      rows.push(...page);
      page = readAllRows(this.db, { after: page[page.length - 1]!.position, limit: 5000 });
    }
    const sequences = [...sequenceMarks(this.db)];
    this.primary.commit({ rows, empty: held.empty, sequences, at: this.clock().toISOString() });
  }

  abort(): void {
    if (!this.held) return;
    this.held = null;
    this.primary.rollback();
  }

  /** Outside any write: the checkpoints other processes signed since this copy's newest (start-up, the follower). */
  bringCheckpoints(): void {
    const newest = prepared(this.db, 'SELECT COALESCE(MAX(n), 0) FROM es_checkpoints').pluck().get() as number;
    const insert = prepared(
      this.db,
      `INSERT OR IGNORE INTO es_checkpoints (${CHECKPOINT_COLUMNS}) VALUES (@n, @tree_size, @key_id, @body, @signature, @public_key, @reason)`,
    );
    for (const c of this.primary.checkpoints(newest)) insert.run(c);
  }

  /** A checkpoint this process signed (stored in the copy as `n`), kept in the primary too. */
  shareCheckpoint(n: number): void {
    const row = prepared(this.db, `SELECT ${CHECKPOINT_COLUMNS} FROM es_checkpoints WHERE n = ?`).get(n) as
      CheckpointRecord | undefined;
    if (row) this.primary.saveCheckpoint(row);
  }

  /**
   * Outside any write: what the primary committed after this copy's head (start-up, the follower), a
   * page at a time — a page ends where a command ends, so a command's record is made from all its rows.
   */
  rowsAfterHead(limit = 5000): EventRow[] {
    const rows = this.primary.rows(readHead(this.db).position, limit);
    if (rows.length < limit) return rows;
    const last = commandOf(rows[rows.length - 1]!);
    for (;;) {
      const more = this.primary.rows(rows[rows.length - 1]!.position, 100);
      const same = more.findIndex((r) => commandOf(r) !== last);
      rows.push(...(same === -1 ? more : more.slice(0, same)));
      if (same !== -1 || more.length < 100) return rows;
    }
  }

  /** Imports rows that continue this copy's chain and projects them (inside the caller's transaction). */
  bringIn(rows: readonly EventRow[]): StoredEvent[] {
    if (rows.length === 0) return [];
    const head = readHead(this.db);
    if (rows[0]!.position !== head.position + 1)
      throw new DomainError(
        'ErrChainMismatch',
        `the primary's rows start at position ${rows[0]!.position}, not after this copy's head ${head.position}`,
        { position: rows[0]!.position },
      );
    const events = importRows(this.db, rows, this.clock().toISOString(), 'first');
    this.projections.apply(this.db, events);
    this.projections.markApplied(this.db, head.position, events[events.length - 1]!.position);
    return events;
  }
}

/** The primary's id marks, where they are higher (ids taken by writers that append no `<kind>-<n>` stream). */
function raiseMarks(db: Database, marks: ReadonlyArray<[string, number]>): void {
  const upsert = prepared(
    db,
    'INSERT INTO es_sequences (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = MAX(value, excluded.value)',
  );
  for (const [name, value] of marks) upsert.run(name, value);
}

const commandOf = (row: EventRow): string => (JSON.parse(row.meta) as { commandId: string }).commandId;
