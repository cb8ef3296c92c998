import type { App } from '../../app.js';
import type { CommandOptions } from '../../engine/handle.js';
import type { WakeSource } from '../../events/runs.js';
import {
  authorRunOfMessage,
  breakerCutoff,
  endedRunsOf,
  openBreaker,
  wokenSince,
} from '../../projections/breaker-queries.js';
import type { RunRow } from '../../projections/run-queries.js';
import { tripBreaker } from '../breakers.js';
import { breakerSettings } from './settings.js';

/**
 * The detectors that read the log's projections, each called inside the command whose fact it judges
 * (a run's end, a wake-up), each an indexed read or two — never a scan. A detector whose threshold is 0
 * is off. The repeated-failure detector watches tool calls instead (failures.ts).
 */
const where = (goalId: number | null): string => (goalId === null ? 'its work outside goals' : `goal #${goalId}`);

/**
 * no_progress: the run just ended; if it and the N−1 runs of the agent on the same goal before it (since
 * the breaker was last lifted) all changed nothing — no claim, hand-in, message, proposal, verdict, task
 * created or dispatched — the breaker trips. execute_agent runs are answers to their caller, never counted.
 */
export function checkNoProgress(app: App, run: RunRow, actor: CommandOptions): void {
  const db = app.engine.db;
  const n = breakerSettings(db, run.agentId).maxRunsWithoutProgress;
  if (n === 0 || run.source === 'execute_agent') return;
  const ended = endedRunsOf(db, run.agentId, run.goalId, breakerCutoff(db, run.agentId, run.goalId), n);
  if (ended.length < n || ended.some((r) => r.progress > 0)) return;
  tripBreaker(
    app,
    {
      agentId: run.agentId,
      goalId: run.goalId,
      breaker: 'no_progress',
      reason: `${n} runs in a row on ${where(run.goalId)} ended without a claim, hand-in, message, proposal or verdict`,
      evidence: { runIds: ended.map((r) => r.runId).reverse(), threshold: n },
    },
    actor,
  );
}

/**
 * wake_depth: a wake-up by messages was refused at the trigger-depth gate (agents waking each other past
 * the agent's max trigger depth). The evidence is the chain of runs, followed back through the messages that
 * woke each one as far as the log says, ending with the refused run.
 */
export function tripWakeDepth(app: App, refused: RunRow, maxDepth: number, actor: CommandOptions): void {
  const db = app.engine.db;
  const chain = [refused.runId];
  let messages = refused.wakes.flatMap((w) => w.messageIds);
  // Only a wake-up by agents' messages is a chain of agents waking each other (a wake-up by hand is not).
  if (messages.length === 0) return;
  for (let i = 0; i <= maxDepth && messages.length > 0; i++) {
    const link = authorRunOfMessage(db, messages[0]!);
    if (!link || chain.includes(link.runId)) break;
    chain.unshift(link.runId);
    messages = link.messageIds;
  }
  tripBreaker(
    app,
    {
      agentId: refused.agentId,
      goalId: refused.goalId,
      breaker: 'wake_depth',
      reason: `a wake-up reached trigger depth ${refused.depth}, the agent's maximum of ${maxDepth}: agents' messages keep waking each other`,
      evidence: { runIds: chain, threshold: maxDepth },
    },
    actor,
  );
}

/** The wake sources a schedule fires: counted against the agent's hourly cap. */
export const SCHEDULED: readonly WakeSource[] = ['probe', 'task_timer'];

/**
 * wake_rate: a wake-up from a probe or a task timer that would be one more than the agent's cap of
 * wake-ups in the trailing hour trips the breaker before it is queued, so the gate refuses it.
 */
export function checkWakeRate(
  app: App,
  wake: { agentId: number; goalId: number | null; source: WakeSource },
  now: string,
  actor: CommandOptions,
): void {
  if (!SCHEDULED.includes(wake.source)) return;
  const db = app.engine.db;
  const cap = breakerSettings(db, wake.agentId).maxWakesPerHour;
  if (cap === 0 || openBreaker(db, wake.agentId, wake.goalId)) return;
  const since = new Date(Date.parse(now) - 3_600_000).toISOString();
  const runIds = wokenSince(db, wake.agentId, SCHEDULED, since, breakerCutoff(db, wake.agentId, wake.goalId), cap);
  if (runIds.length < cap) return;
  tripBreaker(
    app,
    {
      agentId: wake.agentId,
      goalId: wake.goalId,
      breaker: 'wake_rate',
      reason: `probes and task timers woke the agent ${runIds.length} times in the last hour, its cap is ${cap} an hour; this ${wake.source} wake-up would be one more`,
      evidence: { runIds, threshold: cap },
    },
    actor,
  );
}
