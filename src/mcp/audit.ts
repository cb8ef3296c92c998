import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { canonicalize } from '../canonical.js';
import type { Database } from 'better-sqlite3';
import { migrate, openDatabase, prepared } from '../engine/db.js';
import { log } from '../log.js';
import { type Caller } from '../events/principals.js';

/**
 * The audit trail of tool calls, kept apart from the domain event log in `<data>/audit.db`: one row per
 * call, allowed or refused. Rows hold a digest of the arguments, never the arguments (they may carry
 * secrets). The table is append-only by trigger. It runs at durability NORMAL: a process crash loses
 * nothing, a power cut may lose the last rows — the price of not adding an fsync to every read call.
 * `record` queues a row; the queue is written at the end of the event loop's turn (setImmediate, the same
 * moment group commit commits), every row queued by then in one transaction, so calls that arrive
 * together share one WAL commit. A call is answered only after its row was written (`written()`, awaited
 * by callTool): no answered call lacks its row, whatever kills the process after. Readers in this process
 * (`query`, `count`) and `close` write the queue first, and so does the process's exit.
 * It has no secondary index: every call writes a row and few people read them, so filters scan.
 * `principal` is the name (`agent:worker`), which another tenant may reuse; `principalId` (`agent:7`,
 * `user:1` — ids are unique per kind, not across kinds) and `tenantId` (the owning user) say who it was.
 * Rows written before they existed (schema version 1) have them NULL.
 */
export type Outcome = 'success' | 'error' | 'blocked' | 'pending_confirmation';

export interface AuditEntry {
  at: string;
  principal: string;
  principalId: string | null;
  tenantId: number | null;
  tool: string;
  argsDigest: string;
  outcome: Outcome;
  errorCode: string | null;
  durationMs: number;
  commandId: string | null;
}

export interface AuditRow extends AuditEntry {
  id: number;
}

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

const migrations = [
  {
    version: 1,
    up(db: Database) {
      db.exec(`
        CREATE TABLE audit_log (
          id INTEGER PRIMARY KEY, at TEXT NOT NULL, principal TEXT NOT NULL, tool TEXT NOT NULL, args_digest TEXT NOT NULL,
          outcome TEXT NOT NULL CHECK (outcome IN ('success', 'error', 'blocked', 'pending_confirmation')),
          error_code TEXT, duration_ms REAL NOT NULL, command_id TEXT);
        CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
        CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;`);
    },
  },
  {
    // Names are not identities (two tenants may each have an agent `worker`). Existing rows keep NULL:
    // the trail is append-only, and guessing an id from a name after the fact could name the wrong one.
    version: 2,
    up(db: Database) {
      db.exec(
        'ALTER TABLE audit_log ADD COLUMN principal_id TEXT; ALTER TABLE audit_log ADD COLUMN tenant_id INTEGER;',
      );
    },
  },
];

export interface AuditFilter {
  tool?: string;
  principal?: string;
  /** `agent:7` or `user:1`. */
  principalId?: string;
  tenantId?: number;
  outcome?: Outcome;
  /** Rows with an id greater than this. */
  after?: number;
  limit?: number;
}

const COLUMNS = `id, at, principal, principal_id AS principalId, tenant_id AS tenantId, tool, args_digest AS argsDigest, outcome, error_code AS errorCode, duration_ms AS durationMs, command_id AS commandId`;

const INSERT = `INSERT INTO audit_log (at, principal, principal_id, tenant_id, tool, args_digest, outcome, error_code, duration_ms, command_id)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Rows queued at most: a burst this large is written at once rather than held. */
const MAX_QUEUED = 512;

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

  private constructor(readonly db: Database) {
    this.writeAll = db.transaction((rows: readonly unknown[][]) => {
      const insert = prepared(db, INSERT);
      for (const r of rows) insert.run(r);
    });
  }

  /** `dataDir` null opens an in-memory trail (tests). */
  static open(dataDir: string | null): AuditLog {
    const db = openDatabase(dataDir === null ? ':memory:' : join(dataDir, 'audit.db'), { durability: 'normal' });
    migrate(db, migrations);
    return new AuditLog(db);
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
      e.tool,
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
        this.writeAll(rows);
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

  /** Matching rows in id order; with no `after`, the last `limit` of them. */
  query(filter: AuditFilter = {}): AuditRow[] {
    this.flush();
    const where = ['id > ?'];
    const args: unknown[] = [filter.after ?? 0];
    const match = (column: string, value: unknown) => {
      where.push(`${column} = ?`);
      args.push(value);
    };
    if (filter.tool) match('tool', filter.tool);
    if (filter.principal) match('principal', filter.principal);
    if (filter.principalId) match('principal_id', filter.principalId);
    if (filter.tenantId !== undefined) match('tenant_id', filter.tenantId);
    if (filter.outcome) match('outcome', filter.outcome);
    const limit = filter.limit ?? -1;
    if (filter.after === undefined && limit > 0) {
      const rows = this.db
        .prepare(`SELECT ${COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`)
        .all(...args, limit) as AuditRow[];
      return rows.reverse();
    }
    return this.db
      .prepare(`SELECT ${COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`)
      .all(...args, limit) as AuditRow[];
  }

  count(): number {
    this.flush();
    return (prepared(this.db, 'SELECT COUNT(*) AS n FROM audit_log').get() as { n: number }).n;
  }

  close(): void {
    this.flush();
    if (this.db.open) this.db.close();
  }
}
