import type { Database } from 'better-sqlite3';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { importRows } from './command-log.js';
import { prepared } from './db.js';
import type { EventRow, StoredEvent } from './event.js';
import { sequenceMarks } from './ids.js';
import type { ProjectionRegistry } from './projection-registry.js';
import { isWriteConflict, knownUnder, raiseMarks, WriteRecorder, type Expectation } from './replica-record.js';
import { readAllRows, readHead } from './store.js';

/**
 * A replica: this process's SQLite database as a copy of one tenant of a primary store (PostgreSQL) that
 * every node writes through. The domain code stays what it is on SQLite — synchronous commands that read
 * the projections and append — and the primary stays the one record:
 *
 *  - a write transaction (one command, or one group-commit batch) decides against the copy as it is
 *    (`begin(true)`, kept current by the follower), and before the local COMMIT sends the rows it appended,
 *    the keyed commands that appended nothing, the id high-water marks and its read-model writes
 *    (replica-record.ts) to the primary in one round trip that takes the tenant's lock, checks that nothing
 *    changed since the copy's head, writes and commits (`commit`). If something did (ErrWriteConflict),
 *    both sides roll back and the write runs again the other way, which cannot lose a race:
 *  - `begin(false)` first takes the lock on the primary and brings in what other nodes committed since
 *    this copy's head, inside the local transaction; the command then decides on facts no other node can
 *    change until it ends, and `commit` writes under that lock in one more round trip;
 *  - a failure anywhere rolls back both sides (`abort`). A local COMMIT that fails after the primary's
 *    leaves this copy behind, never ahead: the next `begin` (or the follower) brings the rows in again.
 *
 * The copy is a cache: it can be deleted, and is rebuilt from the primary when a node starts.
 */
import { CHECKPOINT_COLUMNS, type CheckpointRecord, type Primary, type PrimaryWrite } from './replica-primary.js';
export type { CheckpointRecord, CommandRecord, Primary, PrimaryState, PrimaryWrite } from './replica-primary.js';

interface Held {
  /** The local head when the transaction began (and the lock's catch-up was in). */
  from: number;
  empty: PrimaryWrite['empty'];
  recorder: WriteRecorder;
  /** Set when the transaction decides without the lock. */
  expect: Expectation | null;
}

export class Replica {
  /** The write transaction under way; null outside one. */
  private held: Held | null = null;
  /** Until when writes take the lock first: another node wrote lately (a race lost, rows brought in under the lock). */
  private contendedUntil = 0;

  constructor(
    readonly primary: Primary,
    private readonly db: Database,
    private readonly projections: ProjectionRegistry,
    private readonly clock: Clock,
  ) {}

  /**
   * Inside the local write transaction. Optimistic: nothing yet (the primary checks at `commit`). Else:
   * takes the primary's lock and imports what others committed.
   */
  begin(optimistic = false): StoredEvent[] {
    if (this.held) throw new Error('the replica already holds the primary lock');
    if (optimistic) {
      const head = readHead(this.db);
      const expect = { head, prefixes: [], known: [], marks: [...sequenceMarks(this.db)] };
      this.hold({ from: head.position, empty: [], recorder: new WriteRecorder(), expect });
      return [];
    }
    const { rows, sequences } = this.primary.lock(readHead(this.db));
    try {
      const events = this.bringIn(rows);
      if (events.length) this.contendedUntil = Date.now() + CONTENDED_MS;
      raiseMarks(this.db, sequences);
      this.hold({ from: readHead(this.db).position, empty: [], recorder: new WriteRecorder(), expect: null });
      return events;
    } catch (e) {
      this.primary.rollback();
      throw e;
    }
  }

  /**
   * Whether a write should take the lock first: while other nodes write to the tenant, a write decided
   * on the copy mostly loses its race and runs twice; alone, it never does.
   */
  get contended(): boolean {
    return Date.now() < this.contendedUntil;
  }

  private hold(held: Held): void {
    this.held = held;
    this.projections.recorder = held.recorder;
  }

  private release(): Held | null {
    const held = this.held;
    this.held = null;
    this.projections.recorder = null;
    return held;
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
    const expect = this.held.expect;
    if (expect) {
      // No lock to read under: the primary checks at commit that nobody recorded another command under it.
      expect.prefixes.push(prefix);
      expect.known.push(...knownUnder(this.db, prefix));
      return;
    }
    const insert = prepared(
      this.db,
      'INSERT OR IGNORE INTO es_commands (command_id, first_position, last_position, committed_at) VALUES (?, ?, ?, ?)',
    );
    for (const c of this.primary.commands(prefix))
      insert.run(c.command_id, c.first_position, c.last_position, c.committed_at);
  }

  /**
   * Before the local COMMIT: the primary takes what this transaction appended and commits. Optimistic, a
   * transaction that wrote nothing is still checked: its answers (a refusal) were decided on the copy.
   */
  commit(): void {
    const held = this.release();
    if (!held) return;
    const rows: EventRow[] = [];
    for (let page = readAllRows(this.db, { after: held.from, limit: 5000 }); page.length;) {
      rows.push(...page);
      page = readAllRows(this.db, { after: page[page.length - 1]!.position, limit: 5000 });
    }
    const sequences = [...sequenceMarks(this.db)];
    const writes = held.recorder.upTo(rows[rows.length - 1]?.position ?? held.from);
    const write = { rows, empty: held.empty, sequences, at: this.clock().toISOString(), writes };
    if (held.expect) this.writeExpecting(held.expect, write);
    else this.primary.commit(write);
  }

  /** Optimistic, after a refusal: writes nothing, but answers ErrWriteConflict if the copy was behind. */
  check(): void {
    const held = this.release();
    if (held && !held.expect) this.primary.rollback();
    if (!held?.expect) return;
    this.writeExpecting(held.expect, {
      rows: [],
      empty: [],
      sequences: [],
      at: this.clock().toISOString(),
      writes: [],
    });
  }

  private writeExpecting(expect: Expectation, write: PrimaryWrite): void {
    try {
      this.primary.write(expect, write);
    } catch (e) {
      if (isWriteConflict(e)) this.contendedUntil = Date.now() + CONTENDED_MS;
      throw e;
    }
  }

  abort(): void {
    const held = this.release();
    if (held && !held.expect) this.primary.rollback();
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

const commandOf = (row: EventRow): string => (JSON.parse(row.meta) as { commandId: string }).commandId;

/** How long a sign of another node's writes keeps this one taking the lock first. */
const CONTENDED_MS = 1000;
