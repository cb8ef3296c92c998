import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { tryFileLock, type FileLock } from '../engine/file-lock.js';
import { log } from '../log.js';

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
const FLAGS_APPEND =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
/** A segment fully moved and at least this large is closed, deleted and replaced by a new one. */
const ROTATE_BYTES = 8 << 20;
/** A backlog is read in chunks of this size, so a dead process's large journal is not held in memory whole. */
const CHUNK = 4 << 20;
const OUTCOMES = new Set(['success', 'error', 'blocked', 'pending_confirmation']);

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

interface Retired {
  name: string;
  fd: number | null;
  lock: FileLock;
}

export class AuditJournal {
  /** The segment lines are appended to; null until the first append, and after a failed one. */
  private current: Segment | null = null;
  /** This process's segments not yet retired: the current one and any broken one. */
  private readonly mine = new Map<string, Segment>();
  private readonly moveAll: (closing: boolean, locks: FileLock[]) => Retired[];

  constructor(
    private readonly db: Database,
    private readonly dir: string,
    private readonly insert: (row: unknown[]) => void,
    private readonly rotateBytes = ROTATE_BYTES,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const txn = db.transaction((closing: boolean, locks: FileLock[]) => this.moveSegments(closing, locks));
    this.moveAll = (closing, locks) => txn.immediate(closing, locks);
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
    this.move(false);
  }

  /** Moves and deletes this process's segments too: a clean close leaves no journal behind. */
  close(): void {
    this.move(true);
  }

  private move(closing: boolean): void {
    const deadLocks: FileLock[] = [];
    let retired: Retired[];
    try {
      retired = this.moveAll(closing, deadLocks);
    } catch (err) {
      for (const l of deadLocks) l.release(); // rolled back: those segments stay, for the next move
      throw err;
    }
    // Committed: the retired segments' rows are gone, so their files can go.
    for (const r of retired) {
      this.mine.delete(r.name);
      if (this.current?.name === r.name) this.current = null;
      this.removeFiles(r);
    }
  }

  private openSegment(): Segment {
    const name = `${process.pid}-${randomBytes(6).toString('hex')}`;
    const lock = tryFileLock(join(this.dir, `${name}.lock`));
    if (!lock) throw new Error(`audit journal segment ${name} is locked by another process`);
    try {
      prepared(this.db, 'INSERT INTO audit_journal (segment, ingested) VALUES (?, 0)').run(name);
      const fd = openSync(join(this.dir, `${name}.jsonl`), FLAGS_APPEND, 0o600);
      const seg = { name, fd, lock, written: 0, broken: false };
      this.mine.set(name, seg);
      return seg;
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /** Inside the immediate transaction: nothing registers, moves or deletes a segment meanwhile. */
  private moveSegments(closing: boolean, deadLocks: FileLock[]): Retired[] {
    const rows = prepared(this.db, 'SELECT segment, ingested FROM audit_journal').all() as {
      segment: string;
      ingested: number;
    }[];
    const retired: Retired[] = [];
    for (const { segment, ingested } of rows) {
      const mine = this.mine.get(segment) ?? null;
      // Another process's segment: its lock is free only if that process is gone.
      const deadLock = mine ? null : tryFileLock(join(this.dir, `${segment}.lock`));
      if (deadLock) deadLocks.push(deadLock);
      const moved = this.moveLines(segment, ingested);
      const done =
        mine !== null && (closing || mine.broken || (moved === mine.written && mine.written >= this.rotateBytes));
      if (deadLock === null && !done) continue;
      prepared(this.db, 'DELETE FROM audit_journal WHERE segment = ?').run(segment);
      retired.push({ name: segment, fd: mine?.fd ?? null, lock: mine?.lock ?? deadLock! });
    }
    return retired;
  }

  /** Inserts the complete lines past `from` and records the new offset; returns it. */
  private moveLines(segment: string, from: number): number {
    let fd: number;
    try {
      fd = openSync(join(this.dir, `${segment}.jsonl`), constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return from; // registered, not yet created
      throw e;
    }
    let at = from;
    try {
      const size = fstatSync(fd).size;
      while (at < size) {
        const buf = Buffer.allocUnsafe(Math.min(CHUNK, size - at));
        const n = readSync(fd, buf, 0, buf.length, at);
        const end = buf.subarray(0, n).lastIndexOf(10);
        if (end < 0) break; // a partial last line (or one longer than a chunk, which rows never are)
        for (const line of buf.subarray(0, end).toString('utf8').split('\n')) this.insertLine(segment, line);
        at += end + 1;
      }
    } finally {
      closeSync(fd);
    }
    if (at !== from) prepared(this.db, 'UPDATE audit_journal SET ingested = ? WHERE segment = ?').run(at, segment);
    return at;
  }

  private insertLine(segment: string, line: string): void {
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      row = null;
    }
    if (!Array.isArray(row) || row.length !== 10 || !OUTCOMES.has(row[6] as string)) {
      log.error({ segment, line: line.slice(0, 200) }, 'audit journal line is not a row; skipped');
      return;
    }
    this.insert(row);
  }

  /** After the commit that deleted the segment's row: its files, then its lock. */
  private removeFiles({ name, fd, lock }: Retired): void {
    if (fd !== null) closeSync(fd);
    for (const f of [`${name}.jsonl`, `${name}.lock`]) {
      try {
        unlinkSync(join(this.dir, f));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
          log.warn({ err: e, file: f }, 'audit journal file not removed');
      }
    }
    lock.release();
  }
}
