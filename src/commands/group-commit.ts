import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from 'better-sqlite3';
import type { EventBus } from '../events/bus.js';
import type { StoredEvent } from '../events/event.js';

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
 * No timer is involved: a lone caller's batch commits in the same turn of the event loop, so at low load
 * nothing waits. Anything that is not a grouped caller (the CLI, the HTTP API, reactors, imports) first
 * commits the open batch and then runs its own transaction as before.
 */
interface Ticket {
  /** The batches this caller's commands joined; it answers once all of them committed. */
  batches: Set<Batch>;
}

class Batch {
  readonly events: StoredEvent[] = [];
  commands = 0;
  readonly committed: Promise<void>;
  resolve!: () => void;
  reject!: (e: unknown) => void;
  constructor() {
    this.committed = new Promise<void>((resolve, reject) => { this.resolve = resolve; this.reject = reject; });
    // A batch nobody awaits (every caller failed first) must not become an unhandled rejection.
    this.committed.catch(() => undefined);
  }
}

const grouped = new AsyncLocalStorage<Ticket>();
/**
 * Commands per batch at most. Requests arriving over sockets always let the COMMIT run between turns of
 * the event loop; a caller that loops on promises alone never would, so a batch this full commits first.
 */
export const MAX_BATCH = 256;

export class GroupCommit {
  private current: Batch | null = null;
  /** Batches committed and commands they held, for `colony bench` and tests. */
  readonly stats = { batches: 0, commands: 0 };

  // Prepared once: exec() would parse the statement on every batch.
  private readonly begin;
  private readonly commit;

  constructor(private readonly db: Database, private readonly bus: EventBus) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
  }

  /** Runs `fn` as a grouped caller: its commands may share a COMMIT; the answer waits for that COMMIT. */
  async run<T>(fn: () => Promise<T> | T): Promise<T> {
    const ticket: Ticket = { batches: new Set() };
    const value = await grouped.run(ticket, fn);
    for (const batch of ticket.batches) await batch.committed;
    return value;
  }

  /**
   * Called by an outermost command before it opens its transaction. Inside `run()`: the open batch (one is
   * opened if none is), which the command joins as a savepoint. Elsewhere: null, after committing any open
   * batch, so the command runs in a transaction of its own that nobody else's failure can undo.
   */
  enter(): Batch | null {
    const ticket = grouped.getStore();
    if (!ticket) {
      this.flush();
      return null;
    }
    if (this.current && this.current.commands >= MAX_BATCH) this.flush();
    if (!this.current) this.open();
    const batch = this.current!;
    ticket.batches.add(batch);
    batch.commands++;
    this.stats.commands++;
    return batch;
  }

  /** After a command of the batch failed: a failure SQLite answers by rolling back everything (disk full, I/O) ends the batch. */
  checkAfterFailure(batch: Batch): void {
    if (this.current === batch && !this.db.inTransaction) this.fail(new Error('the batch transaction was rolled back by SQLite after a failed command'));
  }

  /** Commits the open batch now (no-op without one): its callers are answered, its events published. */
  flush(): void {
    const batch = this.current;
    if (!batch) return;
    this.current = null;
    try {
      if (!this.db.inTransaction) throw new Error('the batch transaction was rolled back by SQLite before its COMMIT');
      this.commit.run();
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      batch.reject(e);
      return;
    }
    this.stats.batches++;
    batch.resolve();
    this.bus.publish(batch.events);
  }

  private open(): void {
    this.begin.run();
    this.current = new Batch();
    // Outside the caller's context: the COMMIT and whatever the bus's subscribers then run belong to no caller.
    grouped.exit(() => setImmediate(() => this.flush()));
  }

  private fail(e: unknown): void {
    const batch = this.current!;
    this.current = null;
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    batch.reject(e);
  }
}

export type { Batch };
