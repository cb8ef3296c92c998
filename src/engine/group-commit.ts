import type { Database } from 'better-sqlite3';
import type { EventBus } from './bus.js';
import type { StoredEvent } from './event.js';
import type { Replica } from './replica.js';
import { isWriteConflict } from './replica-record.js';
import { runHeld } from './projection-sql.js';
import { attempt, grouped, newTicket } from './group-ticket.js';
import { SyncFailedError, WalSync } from './wal-sync.js';
import { Batch, CommitFailedError, MAX_BATCH } from './group-batch.js';
import { systemClock, type Clock } from '../clock.js';

/**
 * Group commit: commands that arrive together commit together. Under durability FULL every COMMIT is an
 * fsync, and on this kind of machine the fsync, not the command, sets the pace; ten writers at once
 * should share one.
 *
 * How: a caller that may wait for its answer runs inside `run()` (the MCP tool call does). The first
 * command such a caller starts opens one BEGIN IMMEDIATE transaction — the batch — and schedules its
 * COMMIT with setImmediate, i.e. after every request that arrived in the same turn of the event loop has
 * run its commands. Each command in the batch is a savepoint of it (handle.ts), so a refused command rolls
 * back only itself; ids, idempotency records and event order are exactly what separate transactions would
 * give, because the commands still run one after another on the one connection. The events of the batch
 * go on the bus only after the COMMIT, and `run()` answers only then: no caller is told "done" before its
 * events are on disk, and a crash before the COMMIT loses only unanswered commands, whole.
 *
 * Under FULL the batch's COMMIT leaves its fsync to the thread pool (wal-sync.ts): answers and events
 * still wait for it, the event loop does not.
 *
 * No timer is involved: a lone caller's batch commits in the same turn of the event loop, so at low load
 * nothing waits. Anything that is not a grouped caller (the CLI, the HTTP API, reactors, imports) first
 * commits the open batch and then runs its own transaction as before.
 */

export class GroupCommit {
  private current: Batch | null = null;
  /** On a replica (replica.ts) a batch holds the primary's lock from its BEGIN and commits there first. */
  replica: Replica | null = null;
  /** Batches committed and commands they held, for `colony bench` and tests. */
  readonly stats = { batches: 0, commands: 0, conflicts: 0 };
  /** Commands the last batch held. */
  private lastCommands = 0;
  /**
   * Whether a batch under load leaves its fsync to the thread pool (wal-sync.ts). Only a server turns it
   * on (createHttpApp): requests arriving on sockets give the event loop work to do during the sync. A
   * loop of in-process callers has none; for them the pool's hand-off only adds to the same fsync.
   */
  deferSyncs = false;

  // Prepared once: exec() would parse the statement on every batch.
  private readonly begin;
  private readonly commit;
  /** Syncs the batches' WAL off the event loop; answers that read what may not be on disk yet wait for `visible()`. */
  readonly wal: WalSync;

  constructor(
    private readonly db: Database,
    private readonly bus: EventBus,
    clock: Clock = systemClock,
  ) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.wal = new WalSync(db, clock);
  }

  /**
   * Runs `fn` as a grouped caller: its commands may share a COMMIT; the answer waits for that COMMIT.
   *
   * `retry`: `fn` has no effect outside the database before its COMMIT, so on a replica its commands may be
   * decided without the primary's lock (an optimistic batch), and if the batch loses a race to another
   * node (ErrWriteConflict: both sides rolled back, nothing of it anywhere) `fn` runs once more, in a
   * batch that takes the lock first and so cannot lose. Never when one of its batches already committed.
   */
  async run<T>(fn: () => Promise<T> | T, options: { retry?: boolean } = {}): Promise<T> {
    const ticket = newTicket(options.retry === true && this.replica !== null);
    const visible = () => this.visible();
    try {
      return await attempt(ticket, fn, visible);
    } catch (e) {
      if (!ticket.retry || ticket.committed || !(e instanceof CommitFailedError) || !isWriteConflict(e.cause)) throw e;
      this.stats.conflicts++;
      return attempt(newTicket(false), fn, visible);
    }
  }

  /**
   * Runs `fn`, a read that runs no command: it answers once what it may have read is on disk — a batch
   * committed but still syncing is visible on this connection (wal-sync.ts). At once when nothing waits.
   */
  async read<T>(fn: () => Promise<T> | T): Promise<T> {
    try {
      return await fn();
    } finally {
      await this.visible(); // an error built from what it read waits too
    }
  }

  /**
   * Settles once everything this connection shows now is on disk: the batches committed and syncing, and
   * the open batch too — a read on this connection sees its commands' rows before their COMMIT. Null when
   * nothing waits. Both, not the open batch alone: a batch whose COMMIT fails is rejected at once, before
   * the batches committed ahead of it are synced. A batch that fails settles this all the same: its own
   * callers are told, and a read is not the one to fail for it.
   */
  visible(): Promise<void> | null {
    const synced = this.wal.durable();
    const open = this.current?.committed.catch(() => undefined);
    if (!open) return synced;
    return synced ? Promise.all([synced, open]).then(() => undefined) : open;
  }

  /** Runs `fn` as no caller's work (a reactor's, a process's), so its commands commit on their own. */
  static detached<T>(fn: () => T): T {
    return grouped.exit(fn);
  }

  /**
   * Called by an outermost command before it opens its transaction. Inside `run()`: the open batch (one is
   * opened if none is), which the command joins as a savepoint. Elsewhere: null, after committing any open
   * batch, so the command runs in a transaction of its own that nobody else's failure can undo.
   */
  enter(): Batch | null {
    this.wal.refuseIfStopped();
    const ticket = grouped.getStore();
    if (!ticket?.open) {
      this.flush(); // and its sync: this command's events are published after the batches'
      this.wal.refuseIfStopped(); // that sync may be the one that failed
      return null;
    }
    // A batch SQLite already rolled back (an I/O error in some statement) is failed, never joined.
    if (this.current && !this.db.inTransaction) this.fail(new Error('the batch transaction was rolled back by SQLite'));
    // The flush publishes, and what the bus's subscribers run then is no caller's. A caller that cannot
    // run again never joins a batch decided without the lock: that one commits first.
    const full = this.current && this.current.commands >= MAX_BATCH;
    if (full || (this.current?.optimistic && !ticket.retry)) grouped.exit(() => this.commitOpen());
    if (!this.current) this.open(ticket.retry && this.replica !== null && !this.replica.contended);
    const batch = this.current!;
    if (!ticket.batches.has(batch)) {
      ticket.batches.add(batch);
      void batch.committed.then(
        () => {
          ticket.batches.delete(batch);
          ticket.committed = true;
        },
        () => undefined,
      );
    }
    batch.commands++;
    this.stats.commands++;
    return batch;
  }

  /** Commits the open batch now (no-op without one) and waits for its sync: its callers are answered, its events published. */
  flush(): void {
    this.commitOpen();
    this.wal.settle();
  }

  /**
   * The last position of `head` that is committed, on disk and published: a reader of the log on this
   * connection reads up to it, never past (an open batch's rows are visible here before its COMMIT, a
   * committed batch's before its sync); what lies beyond reaches the bus once it is released.
   */
  durableHead(head: number): number {
    const first = this.wal.firstPending() ?? this.current?.events[0]?.position;
    return first === undefined ? head : Math.min(head, first - 1);
  }

  close(): void {
    this.flush();
    this.wal.close();
  }

  /** Commits the open batch (no-op without one); its callers are answered once it is on disk (at once if its COMMIT synced). */
  commitOpen(): void {
    const batch = this.current;
    if (!batch) return;
    this.current = null;
    try {
      if (!this.db.inTransaction) throw new Error('the batch transaction was rolled back by SQLite before its COMMIT');
      runHeld(this.db, batch.held);
      this.replica?.commit();
    } catch (e) {
      this.replica?.abort();
      this.rollback(batch);
      this.failed(batch, e);
      return;
    }
    try {
      this.commit.run();
    } catch (e) {
      this.rollback(batch);
      if (!this.replica) {
        this.failed(batch, e);
        return;
      }
      // On a replica the primary has committed: the callers' writes stand, and this copy takes them in
      // again (its next write or its follower), publishing them then — not now, from rows it lost.
      batch.events.length = 0;
    }
    if (batch.deferred) this.wal.end();
    this.stats.batches++;
    this.lastCommands = batch.commands;
    const events = batch.events.splice(0);
    // Whatever runs it (a sync's callback, a caller's flush), what the bus's subscribers do is no caller's.
    const release = (failed: unknown): void =>
      grouped.exit(() => {
        if (failed) return batch.reject(failed instanceof SyncFailedError ? failed : new SyncFailedError(failed));
        batch.resolve();
        this.bus.publish(events);
      });
    if (batch.deferred) this.wal.committed(events[0]?.position, release);
    else this.wal.syncedInLine(events[0]?.position, release); // after the batches before it
  }

  private rollback(batch: Batch): void {
    try {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
    } finally {
      if (batch.deferred) this.wal.end();
    }
  }

  /** Listeners told when a batch's commands were rolled back after they ran (caches built on them must go). */
  readonly onRollback = new Set<() => void>();

  private open(optimistic: boolean): void {
    // Deferred where it pays (`deferSyncs`) and under load only — the last batch grouped callers, or a sync
    // is still running: a lone caller would wait for the pool's hand-off on top of the same fsync. A copy's
    // batch commits on its primary first: its local COMMIT keeps its own settings.
    const deferred =
      this.deferSyncs && !this.replica && (this.lastCommands > 1 || this.wal.waiting) && this.wal.begin();
    try {
      this.begin.run();
    } catch (e) {
      if (deferred) this.wal.end();
      throw e;
    }
    const caught = this.lockPrimary(optimistic);
    this.bus.appended(caught);
    this.current = new Batch(optimistic);
    this.current.deferred = deferred;
    this.current.events.push(...caught);
    // Outside the caller's context: the COMMIT and whatever the bus's subscribers then run belong to no caller.
    grouped.exit(() => setImmediate(() => this.commitOpen()));
  }

  /** On a replica: the primary's lock, and what other nodes committed, inside the batch's transaction (or, optimistic, neither yet). */
  private lockPrimary(optimistic: boolean): StoredEvent[] {
    if (!this.replica) return [];
    try {
      return this.replica.begin(optimistic);
    } catch (e) {
      this.db.exec('ROLLBACK');
      throw e;
    }
  }

  private fail(e: unknown): void {
    const batch = this.current!;
    this.current = null;
    this.replica?.abort();
    this.rollback(batch);
    this.failed(batch, e);
  }

  private failed(batch: Batch, e: unknown): void {
    batch.events.length = 0;
    batch.reject(new CommitFailedError(e));
    for (const listener of this.onRollback) listener();
  }
}
