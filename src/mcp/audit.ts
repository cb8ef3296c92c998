import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { canonicalize } from '../canonical.js';
import type { Database } from 'better-sqlite3';
import { migrate, openDatabase, prepared } from '../db.js';
import type { Caller } from './auth.js';

/**
 * The audit trail of tool calls, kept apart from the domain event log in `<data>/audit.db`: one row per
 * call, allowed or refused. Rows hold a digest of the arguments, never the arguments (they may carry
 * secrets). The table is append-only by trigger. It runs at durability NORMAL: a process crash loses
 * nothing, a power cut may lose the last rows — the price of not adding an fsync to every read call.
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
  caller.kind === 'owner' ? { principalId: `user:${caller.userId}`, tenantId: caller.userId } : { principalId: `agent:${caller.agentId}`, tenantId: caller.ownerId };

/** For audit rows: an unauthenticated call has neither. */
export const principalRefOf = (caller: Caller | null): { principalId: string | null; tenantId: number | null } =>
  caller ? principalRef(caller) : { principalId: null, tenantId: null };

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
  {
    // Names are not identities (two tenants may each have an agent `worker`). Existing rows keep NULL:
    // the trail is append-only, and guessing an id from a name after the fact could name the wrong one.
    version: 2,
    up(db: Database) {
      db.exec('ALTER TABLE audit_log ADD COLUMN principal_id TEXT; ALTER TABLE audit_log ADD COLUMN tenant_id INTEGER;');
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

export class AuditLog {
  private constructor(readonly db: Database) {}

  /** `dataDir` null opens an in-memory trail (tests). */
  static open(dataDir: string | null): AuditLog {
    const db = openDatabase(dataDir === null ? ':memory:' : join(dataDir, 'audit.db'), { durability: 'normal' });
    migrate(db, migrations);
    return new AuditLog(db);
  }

  record(e: AuditEntry): void {
    prepared(this.db, `INSERT INTO audit_log (at, principal, principal_id, tenant_id, tool, args_digest, outcome, error_code, duration_ms, command_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(e.at, e.principal, e.principalId, e.tenantId, e.tool, e.argsDigest, e.outcome, e.errorCode, Math.round(e.durationMs * 1000) / 1000, e.commandId);
  }

  /** Matching rows in id order; with no `after`, the last `limit` of them. */
  query(filter: AuditFilter = {}): AuditRow[] {
    const where = ['id > ?'];
    const args: unknown[] = [filter.after ?? 0];
    if (filter.tool) (where.push('tool = ?'), args.push(filter.tool));
    if (filter.principal) (where.push('principal = ?'), args.push(filter.principal));
    if (filter.principalId) (where.push('principal_id = ?'), args.push(filter.principalId));
    if (filter.tenantId !== undefined) (where.push('tenant_id = ?'), args.push(filter.tenantId));
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
