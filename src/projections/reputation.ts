import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { ReputationEvent } from '../events/reputation.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * The reputation ledger as a read table: one row per piece of evidence. Scores are computed at read
 * time: Σ delta·weight·exp(−ln2·age_days/half_life), clamped to [0, 1], 0.5 when empty.
 */
export type T = 'evidence';

const sql = sqlFor((t: Record<T, string>) => ({
  insert: `INSERT OR IGNORE INTO "${t.evidence}" (position, agent_id, owner_id, config_hash, domain, delta, weight, ref, at, at_day)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
}));

export const reputationProjection: Projection<ReputationEvent, T> = {
  name: 'reputation',
  version: 1,
  handles: ['EvidenceRecorded'],
  tables: ['evidence'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.evidence}" (
        position INTEGER PRIMARY KEY, agent_id INTEGER NOT NULL, owner_id INTEGER NOT NULL, config_hash TEXT NOT NULL,
        domain TEXT NOT NULL, delta REAL NOT NULL, weight REAL NOT NULL, ref TEXT NOT NULL, at TEXT NOT NULL, at_day REAL NOT NULL);
      CREATE INDEX IF NOT EXISTS "${t.evidence}_by_key" ON "${t.evidence}" (owner_id, config_hash, domain, at_day, delta, weight, at);
    `;
  },
  *apply(e, t) {
    if (e.type !== 'EvidenceRecorded') return;
    const d = e.data;
    yield run(
      sql(t).insert,
      e.position,
      d.agentId,
      d.ownerId,
      d.configHash,
      d.domain,
      d.delta,
      d.weight,
      d.ref,
      e.recordedAt,
      dayOf(e.recordedAt),
    );
  },
};

export interface Score {
  domain: string;
  score: number;
  evidenceCount: number;
  lastEvidenceAt: string | null;
}
const LN2 = 0.6931471805599453;

/** Days since the epoch: stored with each row so a score decays rows without parsing their timestamps. */
const dayOf = (iso: string): number => Date.parse(iso) / 86_400_000;

const SCORES = `SELECT domain, count(*) AS n, max(at) AS last, sum(delta * weight * exp(-${LN2} * (@today - at_day) / @h)) AS total
  FROM evidence WHERE owner_id = @owner AND config_hash = @hash AND (@domain IS NULL OR domain = @domain) GROUP BY domain ORDER BY domain`;
/**
 * The same for one domain. A plain `domain = @domain` lets the index seek to that domain's rows; SCORES'
 * `@domain IS NULL OR …` cannot, so it would walk every domain of the config to keep one.
 */
const DOMAIN_SCORE = `SELECT domain, count(*) AS n, max(at) AS last, sum(delta * weight * exp(-${LN2} * (@today - at_day) / @h)) AS total
  FROM evidence WHERE owner_id = @owner AND config_hash = @hash AND domain = @domain GROUP BY domain`;
const toScore = (r: { domain: string; n: number; last: string | null; total: number | null }): Score => ({
  domain: r.domain,
  score: r.n === 0 ? 0.5 : Math.min(1, Math.max(0, r.total ?? 0)),
  evidenceCount: r.n,
  lastEvidenceAt: r.last,
});

/** The rolling score of one (owner, config hash, domain) at `now` (0.5, neutral, without evidence). */
export function scoreOf(
  db: Database,
  ownerId: number,
  configHash: string,
  domain: string,
  now: string,
  halfLifeDays: number,
): Score {
  const r = prepared(db, DOMAIN_SCORE).get({
    today: dayOf(now),
    h: halfLifeDays,
    owner: ownerId,
    hash: configHash,
    domain,
  }) as Parameters<typeof toScore>[0] | undefined;
  return r ? toScore(r) : { domain, score: 0.5, evidenceCount: 0, lastEvidenceAt: null };
}

/**
 * Whether a config hash has any evidence in a domain: what "is there a record yet" asks, answered by the
 * first index entry instead of scoring every row (the count of a busy config grows with each verdict).
 */
export function hasEvidence(db: Database, ownerId: number, configHash: string, domain: string): boolean {
  return (
    prepared(db, 'SELECT 1 FROM evidence WHERE owner_id = ? AND config_hash = ? AND domain = ? LIMIT 1').get(
      ownerId,
      configHash,
      domain,
    ) !== undefined
  );
}

/** Every domain a config hash has evidence in, with its score (sorted by domain), in one pass over the index. */
export function scoresOf(
  db: Database,
  ownerId: number,
  configHash: string,
  now: string,
  halfLifeDays: number,
): Score[] {
  return (
    prepared(db, SCORES).all({
      today: dayOf(now),
      h: halfLifeDays,
      owner: ownerId,
      hash: configHash,
      domain: null,
    }) as Parameters<typeof toScore>[0][]
  ).map(toScore);
}

/** The mean of a config hash's domain scores; 0.5 (neutral) without evidence. */
export function meanScore(scores: readonly Score[]): number {
  return scores.length === 0 ? 0.5 : scores.reduce((n, s) => n + s.score, 0) / scores.length;
}

export interface EvidenceRow {
  at: string;
  domain: string;
  delta: number;
  ref: string;
}

/** The last `limit` pieces of evidence of an (owner, config hash), oldest first. */
export const latestEvidence = (db: Database, ownerId: number, configHash: string, limit: number): EvidenceRow[] =>
  (
    prepared(
      db,
      'SELECT at, domain, delta, ref FROM evidence WHERE owner_id = ? AND config_hash = ? ORDER BY position DESC LIMIT ?',
    ).all(ownerId, configHash, limit) as EvidenceRow[]
  ).reverse();
