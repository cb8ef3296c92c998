import type { Database } from 'better-sqlite3';
import { openBreakersOf, type BreakerRow } from '../../projections/breaker-queries.js';
import { liftCommand } from './notice.js';
import { breakerSettings } from './settings.js';

/** Open breakers and an agent's thresholds as the REST API and `colony agents breakers --json` show them. */
/** One open breaker: `withWhy` false leaves out its reason and evidence (an agent's session that may not read its runs). */
export function breakerView(b: BreakerRow, withWhy = true) {
  return {
    agent: b.agentName,
    agent_id: b.agentId,
    goal_id: b.goalId,
    goal_title: b.goalTitle,
    breaker: b.breaker,
    reason: withWhy ? b.reason : null,
    evidence: withWhy
      ? {
          run_ids: b.evidence.runIds,
          calls: (b.evidence.calls ?? []).map((c) => ({
            tool: c.tool,
            args_digest: c.argsDigest,
            error_code: c.errorCode,
            at: c.at,
          })),
          task_ids: b.evidence.taskIds ?? [],
          threshold: b.evidence.threshold,
        }
      : null,
    tripped_at: b.trippedAt,
    lift: liftCommand(b.agentName, b.goalId),
  };
}

/** The agent's thresholds in effect (0: that detector off) and its open breakers. */
export function breakerDetail(db: Database, agentId: number, withWhy = true) {
  const s = breakerSettings(db, agentId);
  return {
    max_runs_without_progress: s.maxRunsWithoutProgress,
    max_repeated_failures: s.maxRepeatedFailures,
    max_wakes_per_hour: s.maxWakesPerHour,
    breakers: openBreakersOf(db, agentId).map((b) => breakerView(b, withWhy)),
  };
}
