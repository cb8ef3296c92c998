import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { Runtime } from '../events/principals.js';
import type { BillingLane } from '../events/runs.js';

/** What a run's CLI said of it (runs-finished.ts), on every run row. */
export interface RunCliFacts {
  /** The runtime it ran under (null: before runtimes, or not started). */
  runtime: Runtime | null;
  /** False: nothing said what it cost (costCents 0 is then not free). */
  costKnown: boolean;
  billingLane: BillingLane | null;
  /** The CLI's session id, resumed by the agent's next run on the same task or goal (or about neither). */
  cliSession: string | null;
  /** Why a finished run failed by the CLI's own result (runtime/adapters/types.ts FailureCause). */
  cause: string | null;
}

/**
 * The CLI session an agent's run resumes: the one its last succeeded run under the same runtime left on the
 * same task (else the same goal; a run about neither — its inbox, a manual wake — continues its last run
 * about neither: one conversation with the agent, as a person has with the CLI).
 */
export function lastCliSession(
  db: Database,
  agentId: number,
  run: { runId: number; taskId: number | null; goalId: number | null },
  runtime: Runtime,
): string | null {
  const where =
    run.taskId !== null
      ? 'task_id = ?'
      : run.goalId !== null
        ? 'goal_id = ? AND task_id IS NULL'
        : 'goal_id IS ? AND task_id IS NULL';
  const row = prepared(
    db,
    `SELECT cli_session AS s FROM runs WHERE agent_id = ? AND ${where} AND run_id <> ? AND status = 'succeeded'
      AND cli_session IS NOT NULL AND runtime = ? ORDER BY run_id DESC LIMIT 1`,
  ).get(agentId, run.taskId ?? run.goalId, run.runId, runtime) as { s: string } | undefined;
  return row?.s ?? null;
}

/** The tokens the earlier runs of a CLI session recorded: taken off a CLI's session-cumulative usage. */
export function cliSessionTokens(
  db: Database,
  cliSession: string,
  runId: number,
): { tokensIn: number; tokensOut: number } {
  return prepared(
    db,
    `SELECT COALESCE(SUM(tokens_in), 0) AS tokensIn, COALESCE(SUM(tokens_out), 0) AS tokensOut FROM runs
      WHERE cli_session = ? AND run_id <> ?`,
  ).get(cliSession, runId) as { tokensIn: number; tokensOut: number };
}
