import { failRun, finishRun } from '../actions/runs.js';
import type { App } from '../app.js';
import type { LimitKind } from '../events/sandbox.js';
import { getRun, type RunRow } from '../projections/run-queries.js';
import type { ProcessResult } from './harness.js';
import { stoppedBy, type MeterEnd } from './run-meter.js';
import { parseFinalUsage } from './usage.js';
import { credentialLane, recordAdapterEnd, type AdapterLaunch } from './adapter-run.js';
import type { AgentRow } from '../projections/principal-queries.js';

/**
 * The attempt's end as the run's: a command's by its exit and usage line; a CLI's by its adapter's report —
 * except a failed resume, which leaves the run running for a fresh attempt.
 */
export function recordAttemptEnd(
  app: App,
  run: RunRow,
  agent: AgentRow,
  c: { cli: AdapterLaunch | null; secrets: Record<string, string>; home: string },
  end: { r: ProcessResult; limit: LimitKind | null; stop: MeterEnd },
): RunRow & { cause: string | null } {
  const { r, limit, stop } = end;
  const cli = c.cli;
  if (!cli) return { ...recordCommandEnd(app, run, r, limit, stop), cause: null };
  const report = cli.adapter.report(r, {
    expectsColonyCall: run.goalId !== null || run.taskId !== null,
    lane: credentialLane(cli.adapter, c.secrets, c.home),
    resumed: cli.resumed,
  });
  if (report.failure?.cause === 'resume_failed' && !r.timedOut && r.spawnError === null && !stop.cause)
    return { ...getRun(app.engine.db, run.runId)!, cause: 'resume_failed' };
  if (r.spawnError) return { ...recordCommandEnd(app, run, r, null, stop), cause: null };
  const ended = recordAdapterEnd(app, run, r, limit, { adapter: cli.adapter, model: agent.model, report, stop });
  return { ...ended, cause: null };
}

/**
 * How a `command` agent's process ended, as its run's: by its exit, and by the usage line it printed last
 * (usage.ts) — which may be Claude Code's result, judged as Claude Code's runtime judges it — or failed to start.
 */
function recordCommandEnd(app: App, run: RunRow, r: ProcessResult, limit: LimitKind | null, stop: MeterEnd): RunRow {
  // Colony stopped (or the run was failed) while the process ran: its end is no longer the run's.
  if (!app.engine.db.open) return run;
  const now = getRun(app.engine.db, run.runId)!;
  if (now.status !== 'running') return now;
  if (r.spawnError) return failRun(app, run.runId, `the backend command could not start: ${r.spawnError}`);
  const usage = parseFinalUsage(r.stdout);
  const text = usage?.result ?? r.stdout.trim();
  // A command that prints Claude Code's result is judged by it too: a denial or an error result is a failure at exit 0.
  const said = usage?.denied.length
    ? {
        cause: 'permission_denied',
        reason: `the agent's CLI was denied ${usage.denied.length} tool call(s): ${[...new Set(usage.denied)].join(', ')} — give it --allowedTools for them, or use the claude-code runtime (colony agents update NAME --runtime claude-code)`,
      }
    : usage?.isError
      ? { cause: 'error_result', reason: `the agent's CLI ended with an error: ${(usage.result ?? '').slice(0, 300)}` }
      : null;
  return finishRun(app, run.runId, {
    status: r.timedOut ? 'timed_out' : r.exitCode === 0 && !said ? 'succeeded' : 'failed',
    ...(said && !r.timedOut ? said : {}),
    ...stoppedBy(stop),
    runtime: 'command',
    costKnown: usage?.costReported === true || (usage !== null && usage.tokensIn + usage.tokensOut === 0),
    billingLane: 'unknown',
    exitCode: r.exitCode,
    signal: r.signal,
    durationMs: r.durationMs,
    tokensIn: usage?.tokensIn ?? 0,
    tokensOut: usage?.tokensOut ?? 0,
    costCents: usage?.costCents ?? 0,
    outputTail: r.tail,
    agentText: text || null,
    limit,
  });
}
