import { randomBytes } from 'node:crypto';
import type { App } from '../app.js';
import { runDecider } from '../commands/runs.js';
import { taskDecider } from '../commands/tasks.js';
import { DomainError, notFound } from '../errors.js';
import { runStream, type RunFinished, type SessionRole, type Wake, type WakeSource } from '../events/runs.js';
import { taskStream } from '../events/tasks.js';
import { getGoal } from '../projections/goal-queries.js';
import { getTask, rootTasksOfGoal } from '../projections/task-queries.js';
import { getAgent } from '../projections/principals.js';
import { getRun, queuedRunFor, type RunRow } from '../projections/run-queries.js';
import { applySpend, applyTaskSpend } from './budget.js';
import { gateRefusal, noBackend, queueReason } from './runs/gates.js';
import { expireAgentProbes } from './probes.js';
import { runtimeSettings } from './runs/settings.js';
import { wakePrompt } from './runs/prompt.js';
import { type CommandOptions } from '../engine/handle.js';
import { sendSystemDirect } from './notifications.js';

/**
 * Runs as commands (DESIGN §3.14). A wake-up becomes a run in one transaction: merged into the queued
 * run of the same (agent, task) if there is one (coalescing), else checked against the gates in order —
 * each refusal is a `RunRefused` with its gate and reason — then queued (with the reason it must wait,
 * if any). Any process may queue (the CLI does); only the serving runtime starts runs: it tails the log,
 * and `startQueuedRun` re-checks the gates in the transaction that appends `RunStarted`, so a paused
 * goal never gets a new process. The process is the runtime's (after commit, rule 8); its outcome
 * comes back through `finishRun` / `failRun`.
 */
export interface WakeRequest {
  agentId: number;
  source: WakeSource;
  taskId?: number | null;
  goalId?: number | null;
  messageIds?: number[];
  prompt?: string | null;
  depth?: number;
  by: string;
}
export type WakeOutcome = { kind: 'queued' | 'merged' | 'refused'; run: RunRow };

const SYSTEM: CommandOptions = { actor: 'system' };

export function requestRun(app: App, req: WakeRequest, actor: CommandOptions = SYSTEM): WakeOutcome {
  const db = app.engine.db;
  const r = app.engine.transact(actor, (uow) => {
    const agent = getAgent(db, req.agentId);
    if (!agent) throw notFound(`agent ${req.agentId}`, { agent_id: req.agentId });
    if (!agent.command) throw noBackend(agent);
    const task = req.taskId ? getTask(db, req.taskId) : null;
    if (req.taskId && !task)
      throw new DomainError('ErrTaskNotFound', `task ${req.taskId} not found`, { task_id: req.taskId });
    const goalId = task?.goalId ?? req.goalId ?? null;
    const wake: Wake = { source: req.source, messageIds: req.messageIds ?? [], prompt: req.prompt ?? null, by: req.by };
    const waiting = req.source === 'execute_agent' ? null : queuedRunFor(db, agent.agentId, task?.taskId ?? null);
    if (waiting) {
      app.engine.handle(runDecider, runStream(waiting.runId), { type: 'MergeWake', wake }, actor);
      return { kind: 'merged' as const, runId: waiting.runId };
    }
    const runId = uow.ids.next('run');
    const depth = req.depth ?? 0;
    const refusal = gateRefusal(app, agent, goalId, task, depth, actor);
    if (refusal) {
      app.engine.handle(
        runDecider,
        runStream(runId),
        {
          type: 'RefuseRun',
          refusal: {
            runId,
            agentId: agent.agentId,
            ownerId: agent.ownerId,
            taskId: task?.taskId ?? null,
            goalId,
            wake,
            depth,
            gate: refusal.gate,
            reason: refusal.reason,
          },
        },
        actor,
      );
      return { kind: 'refused' as const, runId };
    }
    const wait = queueReason(app, agent.agentId, uow.now, req.source === 'execute_agent');
    app.engine.handle(
      runDecider,
      runStream(runId),
      {
        type: 'QueueRun',
        run: {
          runId,
          agentId: agent.agentId,
          ownerId: agent.ownerId,
          sessionId: randomBytes(6).toString('hex'),
          taskId: task?.taskId ?? null,
          goalId,
          depth,
          wake,
          reason: wait?.reason ?? null,
          notBefore: wait?.notBefore ?? null,
        },
      },
      actor,
    );
    return { kind: 'queued' as const, runId };
  });
  const runId = r.value?.runId ?? (r.events[0]?.data as { runId: number }).runId;
  return { kind: r.value?.kind ?? 'queued', run: getRun(db, runId)! };
}

/**
 * Starts a queued run if its agent is free and out of cooldown; refuses it if a gate now says no.
 * Returns the run when it started, null when it still waits (or is no longer queued).
 */
export function startQueuedRun(app: App, runId: number, actor: CommandOptions = SYSTEM): RunRow | null {
  const started = app.engine.transact(actor, (uow) => {
    const run = getRun(app.engine.db, runId);
    if (!run || run.status !== 'queued') return false;
    if (queueReason(app, run.agentId, uow.now, run.source === 'execute_agent', run.notBefore)) return false;
    const agent = getAgent(app.engine.db, run.agentId);
    if (!agent) {
      app.engine.handle(
        runDecider,
        runStream(runId),
        { type: 'FailRun', reason: `agent ${run.agentId} no longer exists` },
        actor,
      );
      return false;
    }
    return start(app, run, actor);
  });
  return started.value ? getRun(app.engine.db, runId) : null;
}

/** The gates again (the world may have changed while the run waited), then RunStarted and the task's claimed → in_progress. */
function start(app: App, run: RunRow, actor: CommandOptions): boolean {
  const db = app.engine.db;
  const agent = getAgent(db, run.agentId)!;
  const task = run.taskId ? getTask(db, run.taskId) : null;
  const refusal = gateRefusal(app, agent, run.goalId, task, run.depth, actor, true);
  if (refusal) {
    app.engine.handle(
      runDecider,
      runStream(run.runId),
      {
        type: 'RefuseRun',
        refusal: {
          runId: run.runId,
          agentId: agent.agentId,
          ownerId: agent.ownerId,
          taskId: run.taskId,
          goalId: run.goalId,
          wake: run.wakes[0]!,
          depth: run.depth,
          gate: refusal.gate,
          reason: refusal.reason,
        },
      },
      actor,
    );
    return false;
  }
  const settings = runtimeSettings(db, agent.agentId);
  const reservation = task ? { tokens: task.reservedTokens, cents: task.reservedCents } : { tokens: 0, cents: 0 };
  app.engine.handle(
    runDecider,
    runStream(run.runId),
    {
      type: 'StartRun',
      start: {
        runId: run.runId,
        agentId: agent.agentId,
        configHash: agent.configHash,
        reservation,
        traceId: randomBytes(16).toString('hex'),
        timeoutSec: settings.timeoutSec,
      },
    },
    actor,
  );
  if (task && task.status === 'claimed' && task.assigneeAgentId === agent.agentId) {
    app.engine.handle(
      taskDecider,
      taskStream(task.taskId),
      { type: 'StartTask', agent: { agentId: agent.agentId, name: agent.name } },
      actor,
    );
  }
  app.engine.handle(
    runDecider,
    runStream(run.runId),
    { type: 'RecordSessionMessage', role: 'user', content: wakePrompt(db, agent, getRun(db, run.runId)!) },
    actor,
  );
  return true;
}

export type RunOutcome = Omit<RunFinished['data'], 'runId' | 'agentId'> & { agentText: string | null };

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
    const { agentText, ...finish } = outcome;
    if (agentText) recordSessionMessage(app, runId, 'agent', agentText, actor);
    app.engine.handle(
      runDecider,
      runStream(runId),
      { type: 'FinishRun', finish: { runId, agentId: run.agentId, ...finish } },
      actor,
    );
    const spendOn = run.taskId ?? (run.goalId !== null ? rootTaskOf(app, run.goalId) : null);
    if (spendOn !== null && (finish.tokensIn + finish.tokensOut > 0 || finish.costCents > 0)) {
      app.engine.handle(
        taskDecider,
        taskStream(spendOn),
        {
          type: 'RecordCost',
          by: { key: `agent-${run.agentId}`, name: getAgent(db, run.agentId)?.name ?? 'agent' },
          tokens: finish.tokensIn + finish.tokensOut,
          cents: finish.costCents,
          note: `run ${runId}`,
          source: 'run',
          runId,
        },
        actor,
      );
      applyTaskSpend(app, spendOn, actor);
      const goalId = getTask(db, spendOn)!.goalId;
      if (goalId !== null) applySpend(app, getGoal(db, goalId)!, actor);
    }
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
        finish.status === 'timed_out' ? `timed out` : `failed (exit ${finish.exitCode ?? finish.signal ?? '?'})`;
      tellOwner(app, run, `Run #${runId} of agent ${agentName(app, run)} ${what}.${tailOf(finish.outputTail)}`, actor);
      expireAgentProbes(app, run.agentId, 'agent_error', actor);
    }
  });
  return getRun(db, runId)!;
}

/** A run that could not run to its end (the process did not start, Colony restarted under it). */
export function failRun(app: App, runId: number, reason: string, actor: CommandOptions = SYSTEM): RunRow {
  const db = app.engine.db;
  app.engine.transact(actor, () => {
    const run = getRun(db, runId);
    if (!run) throw notFound(`run ${runId}`, { run_id: runId });
    const { events } = app.engine.handle(runDecider, runStream(runId), { type: 'FailRun', reason }, actor);
    if (events.length > 0) {
      tellOwner(app, run, `Run #${runId} of agent ${agentName(app, run)} failed: ${reason}`, actor);
      expireAgentProbes(app, run.agentId, 'agent_error', actor);
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

function rootTaskOf(app: App, goalId: number): number | null {
  return rootTasksOfGoal(app.engine.db, goalId)[0]?.taskId ?? null;
}

const agentName = (app: App, run: RunRow): string => getAgent(app.engine.db, run.agentId)?.name ?? `#${run.agentId}`;
const tailOf = (output: string): string => (output.trim() ? `\nOutput (end):\n${output.trim().slice(-500)}` : '');

function tellOwner(app: App, run: RunRow, body: string, actor: CommandOptions): void {
  sendSystemDirect(
    app,
    run.ownerId,
    `user-${run.ownerId}`,
    body,
    { event: 'RunFailed', run_id: run.runId, agent_id: run.agentId },
    actor,
  );
}
