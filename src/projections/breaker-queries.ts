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

/** The agent's newest runs on the goal that ended after `afterRunId` (finished, or failed while running; no execute_agent run), newest first. */
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
      AND source <> 'execute_agent' ORDER BY run_id DESC LIMIT ?`,
  ).all(agentId, goalId ?? 0, afterRunId, limit) as { runId: number; progress: number }[];

/**
 * Runs of the agent queued by these wake sources since `since` (ISO) and after `afterRunId`, oldest first, at
 * most `limit` (a cap's worth: enough to tell whether it is reached, however many there were).
 */
export function wokenSince(
  db: Database,
  agentId: number,
  sources: readonly string[],
  since: string,
  afterRunId: number,
  limit: number,
): number[] {
  const rows = sources.flatMap(
    (source) =>
      prepared(
        db,
        `SELECT run_id AS runId FROM breaker_runs WHERE agent_id = ? AND source = ? AND queued_at > ? AND run_id > ?
          AND status <> 'refused' ORDER BY queued_at LIMIT ?`,
      ).all(agentId, source, since, afterRunId, limit) as { runId: number }[],
  );
  return rows
    .map((r) => r.runId)
    .sort((a, b) => a - b)
    .slice(0, limit);
}

export function breakerOverridesOf(db: Database, agentId: number): BreakerOverrides | null {
  const r = prepared(
    db,
    `SELECT max_runs_without_progress AS maxRunsWithoutProgress, max_repeated_failures AS maxRepeatedFailures,
      max_wakes_per_hour AS maxWakesPerHour FROM breaker_settings WHERE agent_id = ?`,
  ).get(agentId) as BreakerOverrides | undefined;
  return r ?? null;
}

/**
 * One link of a wake chain: the run of the message's author that was running when it was posted (its
 * start before the message, its end after or none), with the messages that woke that run. Null when the
 * author is no agent or no run of it covers the message.
 */
export function authorRunOfMessage(db: Database, messageId: number): { runId: number; messageIds: number[] } | null {
  const m = prepared(db, 'SELECT from_key AS fromKey, created_at AS at FROM messages WHERE message_id = ?').get(
    messageId,
  ) as { fromKey: string; at: string } | undefined;
  if (!m?.fromKey.startsWith('agent-')) return null;
  const r = prepared(
    db,
    `SELECT run_id AS runId, wakes FROM runs WHERE agent_id = ? AND started_at <= ? AND (finished_at IS NULL OR finished_at >= ?)
      ORDER BY started_at DESC, run_id DESC LIMIT 1`,
  ).get(Number(m.fromKey.slice('agent-'.length)), m.at, m.at) as { runId: number; wakes: string } | undefined;
  if (!r) return null;
  const wakes = JSON.parse(r.wakes) as { messageIds?: number[] }[];
  return { runId: r.runId, messageIds: wakes.flatMap((w) => w.messageIds ?? []) };
}

/**
 * The wake caps that apply to a tenant's agents (each its own, else `fallback`): the highest, and whether
 * any agent has the detector off (0). Read when a schedule is created, never on a hot path.
 */
export function tenantWakeCaps(db: Database, ownerId: number, fallback: number): { highest: number; anyOff: boolean } {
  const r = prepared(
    db,
    `SELECT max(coalesce(s.max_wakes_per_hour, ?)) AS hi, min(coalesce(s.max_wakes_per_hour, ?)) AS lo, count(*) AS n
      FROM agents a LEFT JOIN breaker_settings s ON s.agent_id = a.agent_id WHERE a.owner_id = ?`,
  ).get(fallback, fallback, ownerId) as { hi: number | null; lo: number | null; n: number };
  return r.n === 0 ? { highest: fallback, anyOff: fallback === 0 } : { highest: r.hi!, anyOff: r.lo === 0 };
}
