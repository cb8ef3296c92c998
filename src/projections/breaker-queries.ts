import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { BreakerEvidence, BreakerKind, BreakerOverrides } from '../events/breakers.js';

/** Reads over the breakers projection (live names); each is one indexed lookup or range. */
export interface BreakerRow {
  agentId: number;
  agentName: string;
  ownerId: number;
  goalId: number | null;
  goalTitle: string | null;
  breaker: BreakerKind;
  reason: string;
  evidence: BreakerEvidence;
  trippedBy: string;
  trippedAt: string;
  open: boolean;
  resetAt: string | null;
  resetBy: string | null;
}

const ROW = `SELECT b.agent_id AS agentId, a.name AS agentName, b.owner_id AS ownerId, b.goal_id AS goalId, g.title AS goalTitle,
  b.breaker, b.reason, b.evidence, b.tripped_by AS trippedBy, b.tripped_at AS trippedAt, b.open, b.reset_at AS resetAt, b.reset_by AS resetBy
  FROM breakers b JOIN agents a ON a.agent_id = b.agent_id LEFT JOIN goals g ON g.goal_id = b.goal_id`;

const toRow = (r: Record<string, unknown>): BreakerRow =>
  ({ ...r, evidence: JSON.parse(r.evidence as string), open: r.open === 1 }) as unknown as BreakerRow;

/** The open breaker of (agent, goal), if any: the run gate's one read. */
export function openBreaker(
  db: Database,
  agentId: number,
  goalId: number | null,
): { breaker: BreakerKind; reason: string } | null {
  return (
    (prepared(db, 'SELECT breaker, reason FROM breakers WHERE agent_id = ? AND goal_key = ? AND open = 1').get(
      agentId,
      goalId ?? 0,
    ) as { breaker: BreakerKind; reason: string } | undefined) ?? null
  );
}

export const openBreakersOf = (db: Database, agentId: number): BreakerRow[] =>
  (prepared(db, `${ROW} WHERE b.agent_id = ? AND b.open = 1 ORDER BY b.tripped_at`).all(agentId) as never[]).map(toRow);

/** A tenant's open breakers, newest first (the attention list). */
export const openBreakersOfOwner = (db: Database, ownerId: number, limit = 200): BreakerRow[] =>
  (
    prepared(db, `${ROW} WHERE b.owner_id = ? AND b.open = 1 ORDER BY b.tripped_at DESC LIMIT ?`).all(
      ownerId,
      limit,
    ) as never[]
  ).map(toRow);

export const openBreakerCount = (db: Database, ownerId: number): number =>
  (prepared(db, 'SELECT count(*) AS n FROM breakers WHERE owner_id = ? AND open = 1').get(ownerId) as { n: number }).n;

/** The newest run of (agent, goal)'s last trip: the detectors count only runs after it. 0: it never tripped. */
export const breakerCutoff = (db: Database, agentId: number, goalId: number | null): number =>
  (
    prepared(db, 'SELECT cutoff_run_id AS c FROM breakers WHERE agent_id = ? AND goal_key = ?').get(
      agentId,
      goalId ?? 0,
    ) as { c: number } | undefined
  )?.c ?? 0;

/** The agent's newest runs on the goal that ended after `afterRunId` (finished, or failed while running), newest first. */
export const endedRunsOf = (
  db: Database,
  agentId: number,
  goalId: number | null,
  afterRunId: number,
  limit: number,
): { runId: number; progress: number }[] =>
  prepared(
    db,
    `SELECT run_id AS runId, progress FROM breaker_runs WHERE agent_id = ? AND goal_key = ? AND run_id > ? AND status = 'ended'
      ORDER BY run_id DESC LIMIT ?`,
  ).all(agentId, goalId ?? 0, afterRunId, limit) as { runId: number; progress: number }[];

/** Runs of the agent queued by these wake sources since `since` (ISO) and after `afterRunId`, oldest first. */
export function wokenSince(
  db: Database,
  agentId: number,
  sources: readonly string[],
  since: string,
  afterRunId: number,
): number[] {
  const rows = sources.flatMap(
    (source) =>
      prepared(
        db,
        `SELECT run_id AS runId FROM breaker_runs WHERE agent_id = ? AND source = ? AND queued_at > ? AND run_id > ?
          AND status <> 'refused'`,
      ).all(agentId, source, since, afterRunId) as { runId: number }[],
  );
  return rows.map((r) => r.runId).sort((a, b) => a - b);
}

export function breakerOverridesOf(db: Database, agentId: number): BreakerOverrides | null {
  const r = prepared(
    db,
    `SELECT max_runs_without_progress AS maxRunsWithoutProgress, max_repeated_failures AS maxRepeatedFailures,
      max_wakes_per_hour AS maxWakesPerHour FROM breaker_settings WHERE agent_id = ?`,
  ).get(agentId) as BreakerOverrides | undefined;
  return r ?? null;
}
