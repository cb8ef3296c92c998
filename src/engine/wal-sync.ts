import { closeSync, constants, fdatasync, fdatasyncSync, fstatSync, fsyncSync, openSync, realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { at, openDir } from '../beneath.js';
import type { Database } from 'better-sqlite3';
import { DomainError } from '../errors.js';
import { log } from '../log.js';
import { systemClock, type Clock } from '../clock.js';

/**
 * Durability FULL without its fsync on the event loop. Under FULL every COMMIT waits in fdatasync for the
 * disk (~0.3 ms here): a grouped batch (group-commit.ts) held the one thread that parses requests for that
 * long. Now a batch commits with `synchronous = NORMAL` — SQLite writes its WAL frames and does not sync
 * them — and this syncs the WAL on libuv's thread pool instead; the batch's callers are answered and its
 * events published only once that sync returned, in commit order. What was promised stays what FULL
 * promises: nothing is reported done that a power cut could take back (a crash of the process loses
 * nothing either: the frames are in the kernel's cache). Meanwhile the next batch runs.
 *
 * What changes is who may see a commit before it is on disk: reads of this connection, for the length of
 * one sync. Colony's answers wait for it (`durable()`: the MCP tools, the REST API; the bus publishes
 * after it); another process reading the file in that window may see it, as under NORMAL.
 *
 * Every command outside a batch still commits with FULL, and first `settle()`s the batches before it
 * (GroupCommit.enter), so the bus never runs out of log order. A sync that fails stops all writing: its
 * frames are committed in the WAL and may be gone from the disk, later frames would follow them and a
 * recovery after a power cut would drop those too, and after a failed fsync the kernel may have marked the
 * pages clean, so a later sync proves nothing. Every batch not yet released is answered ErrSyncFailed, its
 * events are not published, readers stop before them, and every later command is refused: the owner
 * restarts Colony once the disk is sound (SQLite then recovers the WAL as far as it is whole).
 */
interface Pending {
  /** The position of the batch's first event, if it appended any. */
  first: number | undefined;
  synced: boolean;
  failed: unknown;
  release: (failed: unknown) => void;
  done?: { promise: Promise<void>; resolve: () => void };
}

/** The batch committed, but the disk did not confirm its WAL frames: the outcome is unknown. */
export class SyncFailedError extends Error {
  constructor(readonly cause: unknown) {
    super(
      `the changes were written but the disk did not confirm them (${(cause as Error)?.message ?? String(cause)}): they may be lost if the machine stops`,
    );
  }
}

export class WalSync {
  /** Off for :memory:, durability NORMAL, or once a sync failed. */
  private enabled: boolean;
  private fd: number | null = null;
  private readonly pending: Pending[] = [];
  private syncing = false;
  private closed = false;
  /** The connection's own level (FULL or EXTRA), put back after each batch. */
  private readonly level: number;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock = systemClock,
  ) {
    const wal = String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
    this.level = Number(db.pragma('synchronous', { simple: true }));
    this.enabled = !db.memory && wal && this.level >= 2;
  }

  /** Before a batch's BEGIN: true if its COMMIT skips the fsync (then `committed` or `end` must follow). */
  begin(): boolean {
    if (!this.enabled || !this.openWal()) return false;
    // Not prepared once: SQLite applies this pragma when it compiles it. Only outside a transaction.
    this.db.exec('PRAGMA synchronous = NORMAL');
    return true;
  }

  /** After that batch's COMMIT or ROLLBACK: every other transaction syncs its own COMMIT again. */
  end(): void {
    try {
      this.db.exec(`PRAGMA synchronous = ${this.level}`);
    } catch (e) {
      this.fail(e); // a connection left at NORMAL would report unsynced COMMITs done: no more writes
    }
  }

  /** A batch committed without its sync: `release` runs once the WAL is on disk, after every earlier batch's. */
  committed(first: number | undefined, release: (failed: unknown) => void): void {
    if (this.failure) {
      // Opened before a sync failed, committed after: no later sync can vouch for it (see fail()).
      this.lostFrom ??= first;
      this.pending.push({ first, synced: true, failed: this.failure.cause, release });
      this.release();
      return;
    }
    this.pending.push({ first, synced: false, failed: null, release });
    this.kick();
  }

  /** A batch committed and not yet released. */
  get waiting(): boolean {
    return this.pending.length > 0;
  }

  /** The first position committed but not yet released (on disk and published), or not confirmed on disk at all. */
  firstPending(): number | undefined {
    return this.pending.find((p) => p.first !== undefined)?.first ?? this.lostFrom;
  }

  /** Throws ErrWritesStopped once a sync failed (every command asks first: GroupCommit.enter). */
  refuseIfStopped(): void {
    const stopped = this.failure;
    if (!stopped) return;
    this.stopped!.refused++;
    throw new DomainError(
      'ErrWritesStopped',
      `Colony takes no more writes: the disk did not confirm an earlier write (${(stopped.cause as Error)?.message ?? String(stopped.cause)}); restart it once the disk is sound`,
    );
  }

  /** Set once a sync failed: why no more writes are taken. */
  failure: SyncFailedError | null = null;
  /** Since when no writes are taken and how many were refused since (GET /health, "Needs you": mcp/views/integrity.ts). */
  stopped: { since: Date; refused: number } | null = null;
  /** The first position of the batches the failed sync did not confirm: readers never go past it. */
  private lostFrom: number | undefined;

  /** Syncs now, on this thread, and releases every committed batch: before a write outside the batches, or closing. */
  settle(): void {
    if (this.pending.some((p) => !p.synced))
      try {
        fdatasyncSync(this.fd!);
        for (const p of this.pending) p.synced = true;
      } catch (e) {
        this.fail(e);
      }
    this.release();
  }

  /** A batch whose own COMMIT synced (FULL): released in its turn, after the batches before it. */
  syncedInLine(first: number | undefined, release: (failed: unknown) => void): void {
    if (this.failure) this.lostFrom ??= first; // its callers are told it failed: readers never see it either
    this.pending.push({ first, synced: true, failed: this.failure, release });
    this.settle();
  }

  /** Settles once everything committed so far is released (synced or failed); null when nothing waits. */
  durable(): Promise<void> | null {
    const last = this.pending[this.pending.length - 1];
    if (!last) return null;
    if (!last.done) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      last.done = { promise, resolve };
    }
    return last.done.promise;
  }

  close(): void {
    this.settle();
    this.enabled = false;
    this.closed = true;
    // A sync still running on the pool holds the descriptor's number: it closes it when it returns.
    if (!this.syncing) this.closeFd();
  }

  /** One sync at a time, covering every batch committed before it starts (so batches share syncs under load). */
  private kick(): void {
    if (this.syncing) return;
    const covered = this.pending.filter((p) => !p.synced);
    if (covered.length === 0 || this.fd === null) return;
    const fd = this.fd;
    this.syncing = true;
    fdatasync(fd, (err) => {
      this.syncing = false;
      if (err) this.fail(err);
      else for (const p of covered) p.synced = true;
      this.release();
      if (this.closed) this.closeFd();
      else this.kick();
    });
  }

  /** In commit order; a release that writes (a subscriber's command) settles the rest first, re-entering here. */
  private release(): void {
    for (let p = this.pending[0]; p?.synced; p = this.pending[0]) {
      this.pending.shift();
      try {
        p.release(p.failed);
      } catch (err) {
        log.error({ err }, 'releasing a committed batch failed'); // the next ones still go
      }
      p.done?.resolve();
    }
  }

  /** Every batch not yet released fails with it; no command is taken from now on. */
  private fail(e: unknown): void {
    if (!this.failure) {
      log.error({ err: e }, 'the disk did not confirm a write (fdatasync failed): Colony takes no more writes');
      this.failure = new SyncFailedError(e);
      this.stopped = { since: this.clock(), refused: 0 };
      this.lostFrom = this.pending.find((p) => !p.synced && p.first !== undefined)?.first;
    }
    this.enabled = false;
    for (const p of this.pending) if (!p.synced) Object.assign(p, { synced: true, failed: e });
  }

  /**
   * The WAL's descriptor. SQLite names the WAL after the database file with its links resolved; that
   * directory is then opened once from `/` with no symlink on the way (beneath.ts) and the WAL beneath
   * its descriptor, O_NOFOLLOW (libuv opens close-on-exec): nothing checked is looked up again. SQLite
   * syncs the directory the first time it syncs a new WAL; the syncs being ours, so is that. Reopened if
   * the file was unlinked (it is not, while this connection is open; a check costs one fstat).
   */
  private openWal(): boolean {
    if (this.fd !== null && fstatSync(this.fd).nlink > 0) return true;
    if (this.syncing) return false; // the old one is still being synced: this batch syncs its own COMMIT
    this.closeFd();
    try {
      const file = realpathSync(this.db.name);
      const dir = openDir(dirname(file));
      try {
        this.fd = openSync(at(dir, `${basename(file)}-wal`), constants.O_RDONLY | constants.O_NOFOLLOW);
        fsyncSync(dir);
      } finally {
        closeSync(dir);
      }
      return true;
    } catch (e) {
      // No WAL file yet (nothing written since it was checkpointed away): this batch syncs its own COMMIT.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.disable(e);
      return false;
    }
  }

  private disable(e: unknown): void {
    if (this.enabled)
      log.error({ err: e }, 'the WAL cannot be opened to sync it: every COMMIT syncs in line from now on');
    this.enabled = false;
  }

  private closeFd(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
