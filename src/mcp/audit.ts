import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { canonicalize } from '../canonical.js';
import type { Database } from 'better-sqlite3';
import { migrate, openDatabase, prepared } from '../engine/db.js';
import { log } from '../log.js';
import { AuditJournal, JOURNAL_DIR } from './audit-journal.js';
import { INSERT, migrations, selectRows, type AuditEntry, type AuditFilter, type AuditRow } from './audit-schema.js';

export type { AuditEntry, AuditFilter, AuditRow, Outcome } from './audit-schema.js';
import { type Caller } from '../events/principals.js';

/**
 * The audit trail of tool calls, kept apart from the domain event log in `<data>/audit.db`: one row per
 * call, allowed or refused. Rows hold a digest of the arguments, never the arguments (they may carry
 * secrets). The table is append-only by trigger. It runs at durability NORMAL: a process crash loses
 * nothing, a power cut may lose the last rows — the price of not adding an fsync to every read call.
 * `record` queues a row; the queue is written at the end of the event loop's turn (setImmediate, the same
 * moment group commit commits), every row queued by then with one write() to this process's audit
 * journal (audit-journal.ts), which moves them into audit.db a moment later, many turns in one transaction.
 * A call is answered only after its row was written (`written()`, awaited by callTool): no answered call
 * lacks its row, whatever kills the process after — the next process to open the trail moves what a dead
 * one left. Readers (`query`, `count`, in any process) and `close` write the queue and move every journal
 * first, so they see every row written so far; the process's exit writes the queue.
 * It has no secondary index: every call writes a row and few people read them, so filters scan.
 * `principal` is the name (`agent:worker`), which another tenant may reuse; `principalId` (`agent:7`,
 * `user:1` — ids are unique per kind, not across kinds) and `tenantId` (the owning user) say who it was.
 * Rows written before they existed (schema version 1) have them NULL.
 */
/** Who a caller is, by id and tenant, never by name: the key sessions are bound to and audit rows carry. */
export interface PrincipalRef {
  principalId: string;
  tenantId: number;
}

export const principalRef = (caller: Caller): PrincipalRef =>
  caller.kind === 'owner'
    ? { principalId: `user:${caller.userId}`, tenantId: caller.userId }
    : { principalId: `agent:${caller.agentId}`, tenantId: caller.ownerId };

/** For audit rows: an unauthenticated call has neither. */
export const principalRefOf = (caller: Caller | null): { principalId: string | null; tenantId: number | null } =>
  caller ? principalRef(caller) : { principalId: null, tenantId: null };

/** sha256 of `{}`: the digest of every call without arguments (whoami, my_status…), computed once. */
const EMPTY_DIGEST = createHash('sha256').update('{}').digest('hex');

/** A plain object with no keys canonicalizes to `{}` (no toJSON of its own: its prototype is Object's or none). */
const isEmptyPlain = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.keys(v).length === 0;
};

export const argsDigest = (args: unknown): string => {
  if (args === undefined || args === null || (typeof args === 'object' && isEmptyPlain(args))) return EMPTY_DIGEST;
  try {
    return createHash('sha256').update(canonicalize(args)).digest('hex');
  } catch {
    return 'unhashable';
  }
};

export interface AuditOpenOptions {
  /** A journal segment fully moved and this large is replaced by a new one (default 8 MiB). */
  rotateBytes?: number;
}

/** Characters of a tool name the trail keeps. */
const MAX_TOOL_NAME = 200;
/** Rows queued at most: a burst this large is written at once rather than held. */
const MAX_QUEUED = 512;
/** How long journaled rows wait before this process moves them into audit.db (readers move them at once). */
const MOVE_AFTER_MS = 250;

/** Trails with queued rows, written when the process exits (one listener for all of them). */
const unwritten = new Set<AuditLog>();
let exitHook = false;
function writeOnExit(log: AuditLog): void {
  unwritten.add(log);
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const l of [...unwritten]) l.flush();
  });
}

export class AuditLog {
  /** Rows recorded and not yet written, in call order (their values fixed when recorded). */
  private queue: unknown[][] = [];
  /** The write the queued rows wait for, once one is scheduled. */
  private pending: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | null = null;
  private readonly writeAll: (rows: readonly unknown[][]) => void;
  /** Null for an in-memory trail, whose rows go straight into the database. */
  private readonly journal: AuditJournal | null;
  private moveTimer: NodeJS.Timeout | null = null;
  /** Moves that failed in a row (backoff, and one log line per streak). */
  private moveFailures = 0;

  private constructor(
    readonly db: Database,
    dataDir: string | null,
    options: AuditOpenOptions,
  ) {
    const insert = (r: unknown[]) => prepared(db, INSERT).run(r);
    this.writeAll = db.transaction((rows: readonly unknown[][]) => {
      for (const r of rows) insert(r);
    });
    this.journal =
      dataDir === null ? null : new AuditJournal(db, join(dataDir, JOURNAL_DIR), insert, options.rotateBytes);
  }

  /** `dataDir` null opens an in-memory trail (tests). Rows a dead process left in its journal are moved. */
  static open(dataDir: string | null, options: AuditOpenOptions = {}): AuditLog {
    const db = openDatabase(dataDir === null ? ':memory:' : join(dataDir, 'audit.db'), { durability: 'normal' });
    try {
      migrate(db, migrations);
      const trail = new AuditLog(db, dataDir, options);
      trail.moveJournal('recover');
      return trail;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** Queues the call's row; it is written at the end of this turn of the event loop (see above), or by `flush`. */
  record(e: AuditEntry): void {
    // A closed trail refuses at once, with the error the direct insert gave.
    if (!this.db.open) throw new TypeError('The database connection is not open');
    this.queue.push([
      e.at,
      e.principal,
      e.principalId,
      e.tenantId,
      // An unknown tool's name is the caller's text, of any length: the trail keeps enough to recognise it.
      e.tool.length > MAX_TOOL_NAME ? `${e.tool.slice(0, MAX_TOOL_NAME)}…` : e.tool,
      e.argsDigest,
      e.outcome,
      e.errorCode,
      Math.round(e.durationMs * 1000) / 1000,
      e.commandId,
    ]);
    if (this.pending === null) {
      let resolve!: () => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => undefined); // a write nobody awaits (a flush on exit) must not be an unhandled rejection
      this.pending = { promise, resolve, reject };
      setImmediate(() => this.flush());
      writeOnExit(this);
    }
    if (this.queue.length >= MAX_QUEUED) this.flush();
  }

  /** Resolves once every row recorded so far is written (at once when none waits); rejects if they could not be. */
  written(): Promise<void> {
    return this.pending?.promise ?? Promise.resolve();
  }

  /**
   * Writes the queued rows now, in one transaction. If that fails (disk full, the file locked past the
   * busy timeout) the rows are logged with what they were and `written()` rejects: the calls waiting on
   * them answer with an error rather than unaudited. Never thrown at whoever happened to flush.
   */
  flush(): void {
    unwritten.delete(this);
    const rows = this.queue;
    const pending = this.pending;
    this.pending = null;
    this.queue = [];
    try {
      if (rows.length > 0) {
        if (!this.db.open) throw new Error('the audit trail is closed');
        if (this.journal) {
          this.journal.append(rows);
          this.moveSoon();
        } else this.writeAll(rows);
      }
      pending?.resolve();
    } catch (err) {
      log.error(
        { err, rows: rows.map((r) => ({ at: r[0], principal: r[1], tool: r[4], outcome: r[6] })) },
        'audit rows not written',
      );
      pending?.reject(err);
    }
  }

  /**
   * Journaled rows reach audit.db within MOVE_AFTER_MS. A failed move is retried, the rows staying
   * journaled, at doubling intervals up to a minute: the failure is logged once, and its end once.
   */
  private moveSoon(): void {
    if (this.moveTimer) return;
    this.moveTimer = setTimeout(
      () => {
        this.moveTimer = null;
        try {
          if (this.db.open) this.journal?.ingest();
          if (this.moveFailures > 0)
            log.info({ failures: this.moveFailures }, 'audit journal moved into audit.db again');
          this.moveFailures = 0;
        } catch (err) {
          if (this.moveFailures === 0) log.error({ err }, 'audit journal not moved into audit.db; retrying, rows kept');
          this.moveFailures++;
          this.moveSoon();
        }
      },
      Math.min(MOVE_AFTER_MS * 2 ** this.moveFailures, 60_000),
    ).unref();
  }

  /** Writes this process's queue and moves every journal, so a read sees every row written so far. */
  private catchUp(): void {
    this.flush();
    this.moveJournal('ingest');
  }

  /**
   * Moves the journal for a reader (`ingest`) or an opener (`recover`). audit.db busy past its timeout
   * (another process moving a large backlog) does not fail the read: it goes on without the newest rows.
   * Nothing fails a start: the rows stay in the journal for the next move, and the error is logged.
   */
  private moveJournal(how: 'ingest' | 'recover'): void {
    try {
      this.journal?.[how]();
    } catch (err) {
      if (how === 'ingest' && (err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
      log.error({ err }, 'audit journal not moved into audit.db; its rows wait in audit-journal/');
    }
  }

  /** Matching rows in id order; with no `after`, the last `limit` of them. */
  query(filter: AuditFilter = {}): AuditRow[] {
    this.catchUp();
    return selectRows(this.db, filter);
  }

  count(): number {
    this.catchUp();
    return (prepared(this.db, 'SELECT COUNT(*) AS n FROM audit_log').get() as { n: number }).n;
  }

  close(): void {
    this.flush();
    if (this.moveTimer) clearTimeout(this.moveTimer);
    this.moveTimer = null;
    try {
      if (this.db.open) this.journal?.close();
    } catch (err) {
      log.warn({ err }, 'audit journal not moved at close; the next process to open the trail moves it');
    }
    if (this.db.open) this.db.close();
  }
}
