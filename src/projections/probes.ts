import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { ProbeBurnReason, ProbeEvent, ProbeExpiryReason } from '../events/probes.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * Probes as a read table (xylocopa's `probes`). A probe is active while `fired_at` is
 * null and `expires_at` is in the future; an expiry event pulls `expires_at` back to its own time (as
 * xylocopa's trigger does), so "expired" is always `expires_at <= now`. A burned probe counts as fired.
 * Query functions never return the sealed token; only `sealedTokenOf` (for the trigger URL) reads it.
 */
type T = 'probes';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.probes}" (n, probe_id, agent_id, owner_id, token_hash, sealed_token, message, created_at, expires_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  update: `UPDATE "${t.probes}" SET expires_at = ? WHERE probe_id = ?`,
  fired: `UPDATE "${t.probes}" SET fired_at = ?, message_id = ? WHERE probe_id = ? AND fired_at IS NULL`,
  burned: `UPDATE "${t.probes}" SET fired_at = ?, burned_reason = ? WHERE probe_id = ? AND fired_at IS NULL`,
  expired: `UPDATE "${t.probes}" SET expired_reason = ?, expires_at = min(expires_at, ?) WHERE probe_id = ?`,
}));

export const probesProjection: Projection<ProbeEvent, T> = {
  name: 'probes',
  version: 1,
  handles: ['ProbeCreated', 'ProbeUpdated', 'ProbeFired', 'ProbeExpired', 'ProbeBurned'],
  tables: ['probes'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.probes}" (
        n INTEGER PRIMARY KEY, probe_id TEXT NOT NULL UNIQUE, agent_id INTEGER NOT NULL, owner_id INTEGER NOT NULL, token_hash TEXT NOT NULL UNIQUE,
        sealed_token TEXT NOT NULL, message TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, fired_at TEXT, message_id INTEGER,
        expired_reason TEXT, burned_reason TEXT);
      CREATE INDEX IF NOT EXISTS "${t.probes}_by_agent" ON "${t.probes}" (agent_id, fired_at, expires_at);
      CREATE INDEX IF NOT EXISTS "${t.probes}_by_owner" ON "${t.probes}" (owner_id, created_at);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    switch (e.type) {
      case 'ProbeCreated': {
        const d = e.data;
        yield run(
          q.insert,
          d.n,
          d.probeId,
          d.agentId,
          d.ownerId,
          d.tokenHash,
          d.sealedToken,
          d.message,
          e.recordedAt,
          d.expiresAt,
        );
        return;
      }
      case 'ProbeUpdated':
        yield run(q.update, e.data.expiresAt, e.data.probeId);
        return;
      case 'ProbeFired':
        yield run(q.fired, e.data.firedAt, e.data.messageId, e.data.probeId);
        return;
      case 'ProbeBurned':
        yield run(q.burned, e.data.firedAt, e.data.reason, e.data.probeId);
        return;
      case 'ProbeExpired':
        yield run(q.expired, e.data.reason, e.recordedAt, e.data.probeId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};

export interface ProbeRow {
  probeId: string;
  n: number;
  agentId: number;
  ownerId: number;
  message: string;
  createdAt: string;
  expiresAt: string;
  firedAt: string | null;
  messageId: number | null;
  expiredReason: ProbeExpiryReason | null;
  burnedReason: ProbeBurnReason | null;
}

const ROW = `SELECT probe_id AS probeId, n, agent_id AS agentId, owner_id AS ownerId, message, created_at AS createdAt, expires_at AS expiresAt,
  fired_at AS firedAt, message_id AS messageId, expired_reason AS expiredReason, burned_reason AS burnedReason FROM probes`;
const ACTIVE = 'fired_at IS NULL AND expired_reason IS NULL AND expires_at > @now';

export const getProbe = (db: Database, probeId: string): ProbeRow | null =>
  (prepared(db, `${ROW} WHERE probe_id = ?`).get(probeId) as ProbeRow | undefined) ?? null;

export const probeByTokenHash = (db: Database, tokenHash: string): ProbeRow | null =>
  (prepared(db, `${ROW} WHERE token_hash = ?`).get(tokenHash) as ProbeRow | undefined) ?? null;

export const sealedTokenOf = (db: Database, probeId: string): string | null =>
  (prepared(db, 'SELECT sealed_token AS s FROM probes WHERE probe_id = ?').get(probeId) as { s: string } | undefined)
    ?.s ?? null;

/** The agent's active probes, oldest first. */
export const activeProbesOf = (db: Database, agentId: number, now: string): ProbeRow[] =>
  prepared(db, `${ROW} WHERE agent_id = @agent AND ${ACTIVE} ORDER BY n`).all({ agent: agentId, now }) as ProbeRow[];

export const activeProbeCount = (db: Database, agentId: number, now: string): number =>
  (
    prepared(db, `SELECT count(*) AS n FROM probes WHERE agent_id = @agent AND ${ACTIVE}`).get({
      agent: agentId,
      now,
    }) as { n: number }
  ).n;

export interface ProbeFilter {
  ownerId: number;
  agentId: number | null;
  includeFired: boolean;
  now: string;
  limit: number;
}

/** A tenant's probes, newest first: active ones only unless `includeFired` (then fired and expired ones too). */
export function listProbes(db: Database, f: ProbeFilter): ProbeRow[] {
  return prepared(
    db,
    `${ROW} WHERE owner_id = @owner AND (@agent IS NULL OR agent_id = @agent) AND (@all = 1 OR (${ACTIVE}))
    ORDER BY created_at DESC, n DESC LIMIT @limit`,
  ).all({ owner: f.ownerId, agent: f.agentId, all: f.includeFired ? 1 : 0, now: f.now, limit: f.limit }) as ProbeRow[];
}
