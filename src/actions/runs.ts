import type { App } from '../app.js';
import { runDecider } from '../commands/runs.js';
import { taskDecider } from '../commands/tasks.js';
import { notFound } from '../errors.js';
import { runStream, type RunFinished, type SessionRole } from '../events/runs.js';
import { taskStream } from '../events/tasks.js';
import { getGoal } from '../projections/goal-queries.js';
import { getAgent } from '../projections/principal-queries.js';
import { getRun, type RunRow } from '../projections/run-queries.js';
import { recordRunSpend, spendTaskOf } from './runs/spend.js';
import { NOTHING } from '../commands/task-budget.js';
import type { Amount } from '../events/tasks.js';
import { expireAgentProbes } from './probes.js';
import { type CommandOptions } from '../engine/handle.js';
import { sendSystemDirect } from './notifications.js';
import { dmName } from '../events/channels.js';
import { getChannelByName } from '../projections/channel-queries.js';
import { ownerToldOfRunCause } from '../projections/sweep-queries.js';
import { checkNoProgress } from './breakers/detectors.js';

/**
 * Runs as commands: wake-ups queue them and the runtime starts them (runs/queue.ts); here, how a run
 * ends — finished, failed or cancelled — with its transcript, its spend and the owner's DM when it failed.
 */
export { requestRun, startQueuedRun, type WakeOutcome, type WakeRequest } from './runs/queue.js';

const SYSTEM: CommandOptions = { actor: 'system' };

export type RunOutcome = Omit<RunFinished['data'], 'runId' | 'agentId'> & {
  agentText: string | null;
  /** Its tool calls as the CLI reported them, one line each: a system message before the answer. */
  steps?: string[];
  /** What of its usage was already recorded while it ran (runs/spend.ts): only the rest is recorded now. */
  streamed?: Amount;
};

/**
 * The process exited: RunFinished, its output as the session's agent message, the run's own usage
 * as spend on its task (or, for a coordinator's run without one, on the goal's root task) — which may
 * cross the budget and pause the goal in this transaction — and a DM to the owner when it failed.
 */
export function finishRun(app: App, runId: number, outcome: RunOutcome, actor: CommandOptions = SYSTEM): RunRow {
  const db = app.engine.db;
  app.engine.transact(actor, () => {
    const run = getRun(db, runId);
    if (!run) throw notFound(`run ${runId}`, { run_id: runId });
    const { agentText, steps, streamed = NOTHING, ...finish } = outcome;
    if (steps && steps.length > 0)
      recordSessionMessage(app, runId, 'system', `Tool calls:\n${steps.map((s) => `- ${s}`).join('\n')}`, actor);
    if (agentText) recordSessionMessage(app, runId, 'agent', agentText, actor);
    app.engine.handle(
      runDecider,
      runStream(runId),
      { type: 'FinishRun', finish: { runId, agentId: run.agentId, ...finish } },
      actor,
    );
    const spendOn = spendTaskOf(app, run);
    const rest = {
      tokens: Math.max(0, finish.tokensIn + finish.tokensOut - streamed.tokens),
      cents: Math.max(0, finish.costCents - streamed.cents),
    };
    if (spendOn !== null) recordRunSpend(app, run, spendOn, rest, `run ${runId}`, actor);
    if (finish.status === 'timed_out' && run.taskId !== null) {
      // xylocopa's TIMEOUT: the task the run held is timed out (task_dispatch retries it).
      app.engine.handle(
        taskDecider,
        taskStream(run.taskId),
        { type: 'TimeOutTask', agentId: run.agentId, runId, reason: `run ${runId} timed out after ${run.timeoutSec}s` },
        actor,
      );
    }
    if (finish.status !== 'succeeded') {
      const what =
        finish.status === 'timed_out'
          ? `timed out.${tailOf(finish.outputTail)}`
          : finish.reason
            ? `failed: ${finish.reason}`
            : `failed (exit ${finish.exitCode ?? finish.signal ?? '?'}).${tailOf(finish.outputTail)}`;
      const cause = finish.status === 'timed_out' ? 'timed_out' : (finish.cause ?? 'exit');
      // Stopped at its goal's budget: the goal's pause told the owner, once; a task's budget or the day's tokens did not.
      const paused = cause === 'budget' && run.goalId !== null && getGoal(db, run.goalId)?.status === 'paused';
      if (!paused) tellOwner(app, run, `Run #${runId} of agent ${agentName(app, run)} ${what}`, cause, actor);
      expireAgentProbes(app, run.agentId, 'agent_error', actor);
    }
    checkNoProgress(app, run, actor);
  });
  return getRun(db, runId)!;
}

/** A run that could not run to its end (the process did not start, Colony restarted under it). */
export function failRun(
  app: App,
  runId: number,
  reason: string,
  actor: CommandOptions = SYSTEM,
  cause = 'launch',
): RunRow {
  const db = app.engine.db;
  app.engine.transact(actor, () => {
    const run = getRun(db, runId);
    if (!run) throw notFound(`run ${runId}`, { run_id: runId });
    const { events } = app.engine.handle(runDecider, runStream(runId), { type: 'FailRun', reason, cause }, actor);
    if (events.length > 0) {
      tellOwner(app, run, `Run #${runId} of agent ${agentName(app, run)} failed: ${reason}`, cause, actor);
      expireAgentProbes(app, run.agentId, 'agent_error', actor);
      if (run.status === 'running') checkNoProgress(app, run, actor);
    }
  });
  return getRun(db, runId)!;
}

/**
 * Cancels a run that has not ended (an MCP `tasks/cancel`): RunFailed with who cancelled it. A queued run
 * never starts; a running one's process is killed by the runtime holding it, which tails the log — so
 * a cancel recorded by any process reaches it. No DM and no probe expiry: the agent did nothing wrong.
 * Returns false when the run had already ended (nothing to cancel).
 */
export function cancelRun(app: App, runId: number, by: string, actor: CommandOptions): boolean {
  const r = app.engine.transact(actor, () =>
    app.engine.handle(
      runDecider,
      runStream(runId),
      { type: 'FailRun', reason: `cancelled by ${by}`, cancelledBy: by },
      actor,
    ),
  );
  return r.events.length > 0;
}

export function recordSessionMessage(
  app: App,
  runId: number,
  role: SessionRole,
  content: string,
  actor: CommandOptions = SYSTEM,
): void {
  app.engine.handle(runDecider, runStream(runId), { type: 'RecordSessionMessage', role, content }, actor);
}

const agentName = (app: App, run: RunRow): string => getAgent(app.engine.db, run.agentId)?.name ?? `#${run.agentId}`;
const tailOf = (output: string): string => (output.trim() ? `\nOutput (end):\n${output.trim().slice(-500)}` : '');

/**
 * One DM per agent and cause: the owner hears of a failure once, not once per run of an agent that
 * fails the same way on every wake; after a run of the agent succeeds, the same cause is news again.
 */
function tellOwner(app: App, run: RunRow, body: string, cause: string, actor: CommandOptions): void {
  const db = app.engine.db;
  const dm = getChannelByName(db, run.ownerId, dmName('system', `user-${run.ownerId}`));
  if (dm && ownerToldOfRunCause(db, dm.channelId, run.agentId, cause)) return;
  sendSystemDirect(
    app,
    run.ownerId,
    `user-${run.ownerId}`,
    body,
    { event: 'RunFailed', run_id: run.runId, agent_id: run.agentId, cause },
    actor,
  );
}
