import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { canonicalize } from 'json-canonicalize';
import type { Database } from 'better-sqlite3';
import { migrate, openDatabase, prepared } from '../db.js';

/**
 * The audit trail of tool calls, kept apart from the domain event log in `<data>/audit.db`: one row per
 * call, allowed or refused. Rows hold a digest of the arguments, never the arguments (they may carry
 * secrets). The table is append-only by trigger. It runs at durability NORMAL: a process crash loses
 * nothing, a power cut may lose the last rows — the price of not adding an fsync to every read call.
 * It has no secondary index: every call writes a row and few people read them, so filters scan.
 */
export type Outcome = 'success' | 'error' | 'blocked' | 'pending_confirmation';

export interface AuditEntry {
  at: string;
  principal: string;
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

export const argsDigest = (args: unknown): string => {
  try {
    return createHash('sha256').update(canonicalize(args ?? {})).digest('hex');
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
];

export interface AuditFilter {
  tool?: string;
  principal?: string;
  outcome?: Outcome;
  /** Rows with an id greater than this. */
  after?: number;
  limit?: number;
}

const COLUMNS = `id, at, principal, tool, args_digest AS argsDigest, outcome, error_code AS errorCode, duration_ms AS durationMs, command_id AS commandId`;

export class AuditLog {
  private constructor(readonly db: Database) {}

  /** `dataDir` null opens an in-memory trail (tests). */
  static open(dataDir: string | null): AuditLog {
    const db = openDatabase(dataDir === null ? ':memory:' : join(dataDir, 'audit.db'), { durability: 'normal' });
    migrate(db, migrations);
    return new AuditLog(db);
  }

  record(e: AuditEntry): void {
    prepared(this.db, 'INSERT INTO audit_log (at, principal, tool, args_digest, outcome, error_code, duration_ms, command_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(e.at, e.principal, e.tool, e.argsDigest, e.outcome, e.errorCode, Math.round(e.durationMs * 1000) / 1000, e.commandId);
  }

  /** Matching rows in id order; with no `after`, the last `limit` of them. */
  query(filter: AuditFilter = {}): AuditRow[] {
    const where = ['id > ?'];
    const args: unknown[] = [filter.after ?? 0];
    if (filter.tool) (where.push('tool = ?'), args.push(filter.tool));
    if (filter.principal) (where.push('principal = ?'), args.push(filter.principal));
    if (filter.outcome) (where.push('outcome = ?'), args.push(filter.outcome));
    const limit = filter.limit ?? -1;
    if (filter.after === undefined && limit > 0) {
      const rows = this.db.prepare(`SELECT ${COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`).all(...args, limit) as AuditRow[];
      return rows.reverse();
    }
    return this.db.prepare(`SELECT ${COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`).all(...args, limit) as AuditRow[];
  }

  count(): number {
    return (prepared(this.db, 'SELECT COUNT(*) AS n FROM audit_log').get() as { n: number }).n;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
