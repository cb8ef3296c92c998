import type { RunFinished } from '../events/runs.js';
import { sqlFor, type TableNames } from '../engine/projection.js';
import { run, type Steps } from '../engine/projection-sql.js';
import { runtimeRunEnded } from './runs-agent-runtime.js';

/**
 * RunFinished on the runs table (runs.ts): how the process ended, its usage and cost — with whether the
 * cost is known and who pays (the billing lane) — its runtime, the CLI's session to resume, and the
 * cause and words when the CLI's own result made it a failure; then the agent's runtime row.
 */
type T = 'runs' | 'agent_runtime';

const sql = sqlFor((t: TableNames<T>) => ({
  finished: `UPDATE "${t.runs}" SET status = ?, finished_at = ?, exit_code = ?, signal = ?, duration_ms = ?, tokens_in = ?, tokens_out = ?,
    cost_cents = ?, output_tail = ?, limit_hit = ?, runtime = ?, cost_known = ?, billing_lane = ?, cli_session = ?, cause = ?,
    reason = COALESCE(?, reason), reserved_tokens = 0, reserved_cents = 0, updated_at = ? WHERE run_id = ?`,
}));

export function* applyRunFinished(t: TableNames<T>, d: RunFinished['data'], at: string): Steps<void> {
  yield run(
    sql(t).finished,
    d.status,
    at,
    d.exitCode,
    d.signal,
    d.durationMs,
    d.tokensIn,
    d.tokensOut,
    d.costCents,
    d.outputTail,
    d.limit ?? null,
    d.runtime ?? null,
    d.costKnown === false ? 0 : 1,
    d.billingLane ?? null,
    d.cliSession ?? null,
    d.cause ?? null,
    d.reason ?? null,
    at,
    d.runId,
  );
  yield* runtimeRunEnded(t, d, d.status === 'succeeded' ? 'idle' : 'error', at);
}
