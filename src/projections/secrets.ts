import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { ScopeType, SecretEvent } from '../events/secrets.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * Secrets as a read table (SynapBus's `secrets`): every value ever set, sealed, with its scope, when
 * it was revoked (and why) and when Colony last handed it to a process. At most one row per
 * (owner, scope, name) is active; the others are history. Query functions return `SecretInfo`, which has
 * no value field at all; only `sealedSecrets` (for the env-map builder) reads the sealed column.
 */
type T = 'secrets';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.secrets}" (secret_id, owner_id, name, scope_type, scope_id, scope_label, sealed, replaces, created_by, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  revoke: `UPDATE "${t.secrets}" SET revoked_at = ?, revoke_reason = ?, replaced_by = ? WHERE secret_id = ? AND revoked_at IS NULL`,
  used: `UPDATE "${t.secrets}" SET last_used_at = ?, use_count = use_count + 1 WHERE secret_id = ?`,
}));

export const secretsProjection: Projection<SecretEvent, T> = {
  name: 'secrets',
  version: 1,
  handles: ['SecretSet', 'SecretRevoked', 'SecretUsed'],
  tables: ['secrets'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.secrets}" (
        secret_id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL, name TEXT NOT NULL, scope_type TEXT NOT NULL, scope_id INTEGER NOT NULL,
        scope_label TEXT NOT NULL, sealed TEXT NOT NULL, replaces INTEGER, created_by TEXT NOT NULL, created_at TEXT NOT NULL,
        revoked_at TEXT, revoke_reason TEXT, replaced_by INTEGER, last_used_at TEXT, use_count INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX IF NOT EXISTS "${t.secrets}_active" ON "${t.secrets}" (owner_id, scope_type, scope_id, name) WHERE revoked_at IS NULL;
      CREATE INDEX IF NOT EXISTS "${t.secrets}_by_scope" ON "${t.secrets}" (owner_id, scope_type, scope_id);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    switch (e.type) {
      case 'SecretSet': {
        const d = e.data;
        yield run(
          q.insert,
          d.secretId,
          d.ownerId,
          d.name,
          d.scope.type,
          d.scope.id,
          d.scope.label,
          d.sealed,
          d.replaces,
          d.by.name,
          e.recordedAt,
        );
        return;
      }
      case 'SecretRevoked':
        yield run(q.revoke, e.recordedAt, e.data.reason, e.data.replacedBy, e.data.secretId);
        return;
      case 'SecretUsed':
        yield run(q.used, e.recordedAt, e.data.secretId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

export interface ScopeKey {
  type: ScopeType;
  id: number;
}
/** What anyone may see of a secret: never its value. */
export interface SecretInfo {
  secretId: number;
  ownerId: number;
  name: string;
  scopeType: ScopeType;
  scopeId: number;
  scopeLabel: string;
  available: boolean;
  createdBy: string;
  createdAt: string;
  revokedAt: string | null;
  revokeReason: string | null;
  lastUsedAt: string | null;
  useCount: number;
}
export interface SealedSecret {
  secretId: number;
  name: string;
  scopeType: ScopeType;
  sealed: string;
}

const INFO = `SELECT secret_id AS secretId, owner_id AS ownerId, name, scope_type AS scopeType, scope_id AS scopeId, scope_label AS scopeLabel,
  revoked_at IS NULL AS available, created_by AS createdBy, created_at AS createdAt, revoked_at AS revokedAt, revoke_reason AS revokeReason,
  last_used_at AS lastUsedAt, use_count AS useCount FROM secrets`;
const toInfo = (r: Record<string, unknown> | undefined): SecretInfo | null =>
  r ? ({ ...r, available: r.available === 1 } as unknown as SecretInfo) : null;

export const getSecret = (db: Database, secretId: number): SecretInfo | null =>
  toInfo(prepared(db, `${INFO} WHERE secret_id = ?`).get(secretId) as never);

export const activeSecret = (db: Database, ownerId: number, scope: ScopeKey, name: string): SecretInfo | null =>
  toInfo(
    prepared(
      db,
      `${INFO} WHERE owner_id = ? AND scope_type = ? AND scope_id = ? AND name = ? AND revoked_at IS NULL`,
    ).get(ownerId, scope.type, scope.id, name) as never,
  );

/** The owner's secrets, active only unless `all`, optionally in one scope; ordered by scope, then name, then id. */
export function listSecrets(db: Database, ownerId: number, f: { scope?: ScopeKey; all?: boolean } = {}): SecretInfo[] {
  const rows = prepared(
    db,
    `${INFO} WHERE owner_id = @owner AND (@type IS NULL OR (scope_type = @type AND scope_id = @id))
    AND (@all = 1 OR revoked_at IS NULL) ORDER BY scope_type, scope_id, name, secret_id`,
  ).all({ owner: ownerId, type: f.scope?.type ?? null, id: f.scope?.id ?? null, all: f.all ? 1 : 0 }) as Record<
    string,
    unknown
  >[];
  return rows.map((r) => toInfo(r)!);
}

/** The active secrets of the owner in any of `scopes` (each row once), for names-only listings. */
export function activeSecretsIn(db: Database, ownerId: number, scopes: readonly ScopeKey[]): SecretInfo[] {
  return scopes.flatMap((s) => listSecrets(db, ownerId, { scope: s }));
}

/** The sealed values of the owner's active secrets in `scopes` — only the env-map builder calls this. */
export function sealedSecrets(db: Database, ownerId: number, scopes: readonly ScopeKey[]): SealedSecret[] {
  const q = prepared(
    db,
    `SELECT secret_id AS secretId, name, scope_type AS scopeType, sealed FROM secrets
    WHERE owner_id = ? AND scope_type = ? AND scope_id = ? AND revoked_at IS NULL ORDER BY name`,
  );
  return scopes.flatMap((s) => q.all(ownerId, s.type, s.id) as SealedSecret[]);
}

/** One row per name ever set in the scope — its newest secret: available, or revoked with nothing after it. */
export function secretsOfScope(db: Database, ownerId: number, scope: ScopeKey): SecretInfo[] {
  const rows = prepared(
    db,
    `${INFO} WHERE secret_id IN (SELECT max(secret_id) FROM secrets WHERE owner_id = @owner AND scope_type = @type
    AND scope_id = @id GROUP BY name) ORDER BY name`,
  ).all({ owner: ownerId, type: scope.type, id: scope.id }) as Record<string, unknown>[];
  return rows.map((r) => toInfo(r)!);
}
