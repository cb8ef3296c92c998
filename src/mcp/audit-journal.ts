import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { tryFileLock, type FileLock } from '../engine/file-lock.js';
import { log } from '../log.js';
import {
  FLAGS_APPEND,
  readCompleteLines,
  removeSegmentFiles,
  SEGMENT_NAME,
  sweepOrphans,
} from './audit-journal-files.js';

/**
 * Where a process's audit rows are written before they reach `audit.db`: an append-only file of its own,
 * `<data>/audit-journal/<pid>-<random>.jsonl`, one JSON line per row, one write() per turn of the event
 * loop. A write() lands in the kernel's page cache, as a WAL commit at durability NORMAL does, so a row in
 * the journal survives whatever kills the process; it costs ~1 µs against ~20 µs for a SQLite commit, the
 * difference a sequential stdio caller pays on every call.
 *
 * Rows move into `audit_log` exactly once: the `audit_journal` table holds each segment's ingested byte
 * offset, advanced in the same transaction as the rows it covers, and any process may move any segment's
 * complete lines (readers do, before they read, so they see live writers' rows at once). A segment is
 * registered before its file exists and deleted only once fully moved. Its owner holds a file lock on
 * `<name>.lock`; a segment whose lock is free belongs to a dead process: whoever finds it moves what is
 * left and deletes it (a trailing partial line, from a write cut short by a full disk, is dropped).
 */
/** A segment fully moved and at least this large is closed, deleted and replaced by a new one. */
const ROTATE_BYTES = 8 << 20;

export const JOURNAL_DIR = 'audit-journal';

export const JOURNAL_MIGRATION = {
  version: 3,
  up(db: Database) {
    db.exec('CREATE TABLE audit_journal (segment TEXT PRIMARY KEY, ingested INTEGER NOT NULL)');
  },
};

interface Segment {
  name: string;
  fd: number;
  lock: FileLock;
  /** Bytes written; a failed write makes the segment broken: it takes no more lines and retires once moved. */
  written: number;
  broken: boolean;
}

interface MoveHow {
  /** This process's segments are retired too (its trail is closing). */
  closing: boolean;
  /** Files of segments no row names are removed first (on open). */
  sweep: boolean;
}

interface Retired {
  name: string;
  fd: number | null;
  lock: FileLock;
}

/** Lets a segment go as it is, its rows unmoved: the next mover finds its lock free and moves them. */
function releaseSegment(seg: Segment): void {
  try {
    closeSync(seg.fd);
  } catch {
    // already closed or failing: the lock is what tells the next mover
  }
  seg.lock.release();
}

export class AuditJournal {
  /** The segment lines are appended to; null until the first append, and after a failed one. */
  private current: Segment | null = null;
  /** This process's segments not yet retired: the current one and any broken one. */
  private readonly mine = new Map<string, Segment>();
  private readonly moveAll: (how: MoveHow, locks: FileLock[]) => Retired[];

  constructor(
    private readonly db: Database,
    private readonly dir: string,
    private readonly insert: (row: unknown[]) => void,
    private readonly rotateBytes = ROTATE_BYTES,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const txn = db.transaction((how: MoveHow, locks: FileLock[]) => this.moveSegments(how, locks));
    this.moveAll = (how, locks) => txn.immediate(how, locks);
  }

  /** Appends rows (one line each) with one write(); throws if they could not all be written. */
  append(rows: readonly unknown[][]): void {
    const seg = this.current ?? (this.current = this.openSegment());
    const buf = Buffer.from(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    try {
      for (let off = 0; off < buf.length;) off += writeSync(seg.fd, buf, off, buf.length - off);
      seg.written += buf.length;
    } catch (err) {
      // Part of a line may be on disk: nothing more is appended after it, and the segment retires once moved.
      seg.broken = true;
      this.current = null;
      throw err;
    }
  }

  /** Moves every segment's complete lines into audit_log; retires dead, broken or large fully moved ones. */
  ingest(): void {
    this.move({ closing: false, sweep: false });
  }

  /** On open: moves what dead processes left and removes the files of segments no row names any more. */
  recover(): void {
    this.move({ closing: false, sweep: true });
  }

  /**
   * Moves and deletes this process's segments too: a clean close leaves no journal behind. If the move
   * fails, the segments are let go as they are (descriptors closed, locks released): the next process
   * to move the journal finds them dead and moves them.
   */
  close(): void {
    try {
      this.move({ closing: true, sweep: false });
    } finally {
      for (const seg of this.mine.values()) releaseSegment(seg);
      this.mine.clear();
      this.current = null;
    }
  }

  private move(how: MoveHow): void {
    const deadLocks: FileLock[] = [];
    let retired: Retired[];
    try {
      retired = this.moveAll(how, deadLocks);
    } catch (err) {
      for (const l of deadLocks) l.release(); // rolled back: those segments stay, for the next move
      throw err;
    }
    // Committed: the retired segments' rows are gone, so their files can go.
    for (const r of retired) {
      this.mine.delete(r.name);
      if (this.current?.name === r.name) this.current = null;
    }
    for (const r of retired) removeSegmentFiles(this.dir, r.name, r.fd, r.lock);
  }

  private openSegment(): Segment {
    const name = `${process.pid}-${randomBytes(6).toString('hex')}`;
    const lockFile = join(this.dir, `${name}.lock`);
    const lock = tryFileLock(lockFile);
    if (!lock) throw new Error(`audit journal segment ${name} is locked by another process`);
    try {
      prepared(this.db, 'INSERT INTO audit_journal (segment, ingested) VALUES (?, 0)').run(name);
      const fd = openSync(join(this.dir, `${name}.jsonl`), FLAGS_APPEND, 0o600);
      const seg = { name, fd, lock, written: 0, broken: false };
      this.mine.set(name, seg);
      return seg;
    } catch (err) {
      // A registered segment without its file is dead to the next mover, which deletes its row.
      unlinkSync(lockFile);
      lock.release();
      throw err;
    }
  }

  /** Inside the immediate transaction: nothing registers, moves or deletes a segment meanwhile. */
  private moveSegments({ closing, sweep }: MoveHow, deadLocks: FileLock[]): Retired[] {
    const rows = prepared(this.db, 'SELECT segment, ingested FROM audit_journal').all() as {
      segment: string;
      ingested: number;
    }[];
    if (sweep) sweepOrphans(this.dir, new Set(rows.map((r) => r.segment)));
    const retired: Retired[] = [];
    for (const { segment, ingested } of rows) {
      if (!SEGMENT_NAME.test(segment)) continue; // not a name this code wrote: never made into a path
      const mine = this.mine.get(segment) ?? null;
      // Another process's segment: its lock is free only if that process is gone.
      const deadLock = mine ? null : tryFileLock(join(this.dir, `${segment}.lock`));
      if (deadLock) deadLocks.push(deadLock);
      const moved = readCompleteLines(this.dir, segment, ingested, (line) => this.insertLine(segment, line));
      if (moved !== ingested)
        prepared(this.db, 'UPDATE audit_journal SET ingested = ? WHERE segment = ?').run(moved, segment);
      const done =
        mine !== null && (closing || mine.broken || (moved === mine.written && mine.written >= this.rotateBytes));
      if (deadLock === null && !done) continue;
      prepared(this.db, 'DELETE FROM audit_journal WHERE segment = ?').run(segment);
      retired.push({ name: segment, fd: mine?.fd ?? null, lock: mine?.lock ?? deadLock! });
    }
    return retired;
  }

  private insertLine(segment: string, line: string): void {
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      row = null;
    }
    if (!Array.isArray(row) || row.length !== 10) {
      log.error({ segment, line: line.slice(0, 200) }, 'audit journal line is not a row; skipped');
      return;
    }
    try {
      this.insert(row);
    } catch (err) {
      // A row audit_log's constraints refuse (an outcome it does not know, a NULL) is skipped, not retried
      // forever: the statement alone rolls back.
      log.error({ err, segment, line: line.slice(0, 200) }, 'audit journal row refused by audit.db; skipped');
    }
  }
}
