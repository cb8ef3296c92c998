import type { Database } from 'better-sqlite3';
import { JOURNAL_MIGRATION } from './audit-journal.js';

/** The audit trail's table, its migrations and its one query (audit.ts writes it, audit-journal.ts moves rows in). */
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

export const migrations = [
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
  JOURNAL_MIGRATION,
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

export const INSERT = `INSERT INTO audit_log (at, principal, principal_id, tenant_id, tool, args_digest, outcome, error_code, duration_ms, command_id)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Matching rows in id order; with no `after`, the last `limit` of them. */
export function selectRows(db: Database, filter: AuditFilter): AuditRow[] {
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
    const rows = db
      .prepare(`SELECT ${COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`)
      .all(...args, limit) as AuditRow[];
    return rows.reverse();
  }
  return db
    .prepare(`SELECT ${COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`)
    .all(...args, limit) as AuditRow[];
}
