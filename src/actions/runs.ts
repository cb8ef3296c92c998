import { randomBytes } from 'node:crypto';
import type { App } from '../app.js';
import { runDecider } from '../commands/runs.js';
import { taskDecider } from '../commands/tasks.js';
import { DomainError, notFound } from '../errors.js';
import { runStream, type Gate, type QueueReason, type RunFinished, type SessionRole, type Wake, type WakeSource } from '../events/runs.js';
import { taskStream } from '../events/tasks.js';
import { getGoal, getTask, goalTotals, tasksOfGoal, type GoalRow, type TaskRow } from '../projections/goal-queries.js';
import { getAgent, type AgentRow } from '../projections/principals.js';
import { getRun, lastStartOf, queuedRunFor, runningRunOf, runsStartedSince, type RunRow } from '../projections/run-queries.js';
import { applySpend, budgetRefusal, pauseForBudget, type Refusal } from './budget.js';
import { sendSystemDirect } from './channels.js';
import { expireAgentProbes } from './probes.js';
import type { Actor } from './principals.js';
import { runtimeSettings } from './runtime-settings.js';
import { wakePrompt } from './run-prompt.js';

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

const SYSTEM: Actor = { actor: 'system' };

export function requestRun(app: App, req: WakeRequest, actor: Actor = SYSTEM): WakeOutcome {
  const db = app.engine.db;
  const r = app.engine.transact(actor, (uow) => {
    const agent = getAgent(db, req.agentId);
    if (!agent) throw notFound(`agent ${req.agentId}`, { agent_id: req.agentId });
    if (!agent.command) throw noBackend(agent);
    const task = req.taskId ? getTask(db, req.taskId) : null;
    if (req.taskId && !task) throw new DomainError('ErrTaskNotFound', `task ${req.taskId} not found`, { task_id: req.taskId });
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
      app.engine.handle(runDecider, runStream(runId), { type: 'RefuseRun', refusal: {
        runId, agentId: agent.agentId, ownerId: agent.ownerId, taskId: task?.taskId ?? null, goalId, wake, depth, gate: refusal.gate, reason: refusal.reason,
      } }, actor);
      return { kind: 'refused' as const, runId };
    }
    const wait = queueReason(app, agent.agentId, uow.now, req.source === 'execute_agent');
    app.engine.handle(runDecider, runStream(runId), { type: 'QueueRun', run: {
      runId, agentId: agent.agentId, ownerId: agent.ownerId, sessionId: randomBytes(6).toString('hex'), taskId: task?.taskId ?? null, goalId, depth, wake,
      reason: wait?.reason ?? null, notBefore: wait?.notBefore ?? null,
    } }, actor);
    return { kind: 'queued' as const, runId };
  });
  const runId = r.value?.runId ?? (r.events[0]?.data as { runId: number }).runId;
  return { kind: r.value?.kind ?? 'queued', run: getRun(db, runId)! };
}

/**
 * Starts a queued run if its agent is free and out of cooldown; refuses it if a gate now says no.
 * Returns the run when it started, null when it still waits (or is no longer queued).
 */
export function startQueuedRun(app: App, runId: number, actor: Actor = SYSTEM): RunRow | null {
  const started = app.engine.transact(actor, (uow) => {
    const run = getRun(app.engine.db, runId);
    if (!run || run.status !== 'queued') return false;
    if (queueReason(app, run.agentId, uow.now, run.source === 'execute_agent', run.notBefore)) return false;
    const agent = getAgent(app.engine.db, run.agentId);
    if (!agent) {
      app.engine.handle(runDecider, runStream(runId), { type: 'FailRun', reason: `agent ${run.agentId} no longer exists` }, actor);
      return false;
    }
    return start(app, run, actor);
  });
  return started.value ? getRun(app.engine.db, runId) : null;
}

/** The gates again (the world may have changed while the run waited), then RunStarted and the task's claimed → in_progress. */
function start(app: App, run: RunRow, actor: Actor): boolean {
  const db = app.engine.db;
  const agent = getAgent(db, run.agentId)!;
  const task = run.taskId ? getTask(db, run.taskId) : null;
  const refusal = gateRefusal(app, agent, run.goalId, task, run.depth, actor, true);
  if (refusal) {
    app.engine.handle(runDecider, runStream(run.runId), { type: 'RefuseRun', refusal: {
      runId: run.runId, agentId: agent.agentId, ownerId: agent.ownerId, taskId: run.taskId, goalId: run.goalId, wake: run.wakes[0]!, depth: run.depth,
      gate: refusal.gate, reason: refusal.reason,
    } }, actor);
    return false;
  }
  const settings = runtimeSettings(db, agent.agentId);
  const reservation = task ? { tokens: task.reservedTokens, cents: task.reservedCents } : { tokens: 0, cents: 0 };
  app.engine.handle(runDecider, runStream(run.runId), { type: 'StartRun', start: {
    runId: run.runId, agentId: agent.agentId, configHash: agent.configHash, reservation, traceId: randomBytes(16).toString('hex'), timeoutSec: settings.timeoutSec,
  } }, actor);
  if (task && task.status === 'claimed' && task.assigneeAgentId === agent.agentId) {
    app.engine.handle(taskDecider, taskStream(task.taskId), { type: 'StartTask', agent: { agentId: agent.agentId, name: agent.name } }, actor);
  }
  app.engine.handle(runDecider, runStream(run.runId), { type: 'RecordSessionMessage', role: 'user', content: wakePrompt(db, agent, getRun(db, run.runId)!) }, actor);
  return true;
}

interface GateRefusal { gate: Gate; reason: string }
const CLOSED_TASK = new Set(['done', 'cancelled', 'failed', 'timeout']);

/** An agent without a backend command is run from outside (an MCP client of its own): Colony never starts it. */
export const noBackend = (agent: AgentRow): DomainError =>
  new DomainError('ErrNoBackend', `agent ${agent.name} has no backend command, so Colony cannot run it (colony agents update ${agent.name} --command …)`, { agent_id: agent.agentId });

/** The gates in order (DESIGN §3.14); a budget refusal pauses the goal (§3.7). `starting`: the depth and daily checks were passed when queued. */
function gateRefusal(app: App, agent: AgentRow, goalId: number | null, task: TaskRow | null, depth: number, actor: Actor, starting = false): GateRefusal | null {
  const db = app.engine.db;
  const settings = runtimeSettings(db, agent.agentId);
  if (settings.stopped) return { gate: 'stopped', reason: `agent ${agent.name} is stopped; the owner starts it again with colony agents start ${agent.name}` };
  if (!agent.command) return { gate: 'no_backend', reason: noBackend(agent).message };
  if (agent.quarantined) return { gate: 'quarantine', reason: `agent quarantined: ${agent.quarantineReason ?? 'low reputation'}` };
  if (task && CLOSED_TASK.has(task.status)) return { gate: 'task_closed', reason: `task ${task.taskId} is ${task.status}: there is nothing left to run for` };
  const goal = goalId === null ? null : getGoal(db, goalId);
  const budget = goal ? budgetGate(app, goal, task, actor) : null;
  if (budget) return budget;
  if (!starting && depth >= settings.maxTriggerDepth) return { gate: 'trigger_depth', reason: `trigger depth ${depth} reached the agent's maximum of ${settings.maxTriggerDepth}` };
  const today = `${app.engine.clock().toISOString().slice(0, 10)}T00:00:00.000Z`;
  const ran = runsStartedSince(db, agent.agentId, today);
  if (ran >= settings.dailyRunBudget) return { gate: 'daily_run_budget', reason: `agent ${agent.name} already ran ${ran} times today (daily run budget ${settings.dailyRunBudget})` };
  return null;
}

function budgetGate(app: App, goal: GoalRow, task: TaskRow | null, actor: Actor): GateRefusal | null {
  if (goal.status === 'paused') return { gate: 'budget', reason: `goal ${goal.goalId} is paused${goal.pausedReason ? ` (${goal.pausedReason})` : ''}` };
  if (goal.status === 'completed' || goal.status === 'cancelled') return { gate: 'goal_closed', reason: `goal ${goal.goalId} is ${goal.status}` };
  const refusal = task ? budgetRefusal(app, goal, task, { tokens: 0, cents: 0 }) : goalLevelRefusal(app, goal);
  if (!refusal) return null;
  if (refusal.scope === 'goal') pauseForBudget(app, goal, refusal, { key: 'system', name: 'system' }, actor);
  return { gate: 'budget', reason: `${refusal.scope === 'goal' ? `goal ${goal.goalId}` : `task ${refusal.taskId}`} ${refusal.dimension} budget spent: ${refusal.committed} of ${refusal.budget}` };
}

/** A run with no task (the coordinator's): refused once spend and open reservations reach the goal's budget. */
function goalLevelRefusal(app: App, goal: GoalRow): Refusal | null {
  const t = goalTotals(app.engine.db, goal.goalId);
  const committed = { tokens: t.spentTokens + t.reservedTokens, cents: t.spentCents + t.reservedCents };
  for (const [dimension, cap] of [['tokens', goal.budgetTokens], ['cents', goal.budgetCents]] as const) {
    if (cap !== null && cap > 0 && committed[dimension] >= cap) return { scope: 'goal', taskId: 0, dimension, committed: committed[dimension], requested: 0, budget: cap };
  }
  return null;
}

/** Why a run cannot start now (the agent runs already, or is in its cooldown), or null. execute_agent skips the cooldown. */
function queueReason(app: App, agentId: number, now: string, skipCooldown: boolean, notBefore: string | null = null): { reason: QueueReason; notBefore: string | null } | null {
  if (runningRunOf(app.engine.db, agentId)) return { reason: 'agent_running', notBefore: null };
  if (skipCooldown) return null;
  if (notBefore && Date.parse(notBefore) > Date.parse(now)) return { reason: 'cooldown', notBefore };
  const last = lastStartOf(app.engine.db, agentId);
  const cooldownMs = runtimeSettings(app.engine.db, agentId).cooldownSec * 1000;
  if (last && cooldownMs > 0 && Date.parse(last) + cooldownMs > Date.parse(now)) {
    return { reason: 'cooldown', notBefore: new Date(Date.parse(last) + cooldownMs).toISOString() };
  }
  return null;
}

export type RunOutcome = Omit<RunFinished['data'], 'runId' | 'agentId'> & { agentText: string | null };

/**
 * The process exited: RunFinished, its output as the session's agent message, the run's own usage
 * as spend on its task (or, for a coordinator's run without one, on the goal's root task) — which may
 * cross the budget and pause the goal in this transaction — and a DM to the owner when it failed.
 */
export function finishRun(app: App, runId: number, outcome: RunOutcome, actor: Actor = SYSTEM): RunRow {
  const db = app.engine.db;
  app.engine.transact(actor, () => {
    const run = getRun(db, runId);
    if (!run) throw notFound(`run ${runId}`, { run_id: runId });
    const { agentText, ...finish } = outcome;
    if (agentText) recordSessionMessage(app, runId, 'agent', agentText, actor);
    app.engine.handle(runDecider, runStream(runId), { type: 'FinishRun', finish: { runId, agentId: run.agentId, ...finish } }, actor);
    const spendOn = run.taskId ?? (run.goalId !== null ? rootTaskOf(app, run.goalId) : null);
    if (spendOn !== null && (finish.tokensIn + finish.tokensOut > 0 || finish.costCents > 0)) {
      app.engine.handle(taskDecider, taskStream(spendOn), { type: 'RecordCost', by: { key: `agent-${run.agentId}`, name: getAgent(db, run.agentId)?.name ?? 'agent' },
        tokens: finish.tokensIn + finish.tokensOut, cents: finish.costCents, note: `run ${runId}`, source: 'run' }, actor);
      applySpend(app, getGoal(db, getTask(db, spendOn)!.goalId)!, actor);
    }
    if (finish.status !== 'succeeded') {
      const what = finish.status === 'timed_out' ? `timed out` : `failed (exit ${finish.exitCode ?? finish.signal ?? '?'})`;
      tellOwner(app, run, `Run #${runId} of agent ${agentName(app, run)} ${what}.${tailOf(finish.outputTail)}`, actor);
      expireAgentProbes(app, run.agentId, 'agent_error', actor);
    }
  });
  return getRun(db, runId)!;
}

/** A run that could not run to its end (the process did not start, Colony restarted under it). */
export function failRun(app: App, runId: number, reason: string, actor: Actor = SYSTEM): RunRow {
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

export function recordSessionMessage(app: App, runId: number, role: SessionRole, content: string, actor: Actor = SYSTEM): void {
  app.engine.handle(runDecider, runStream(runId), { type: 'RecordSessionMessage', role, content }, actor);
}

function rootTaskOf(app: App, goalId: number): number | null {
  return tasksOfGoal(app.engine.db, goalId).find((t) => t.parentId === null)?.taskId ?? null;
}

const agentName = (app: App, run: RunRow): string => getAgent(app.engine.db, run.agentId)?.name ?? `#${run.agentId}`;
const tailOf = (output: string): string => (output.trim() ? `\nOutput (end):\n${output.trim().slice(-500)}` : '');

function tellOwner(app: App, run: RunRow, body: string, actor: Actor): void {
  sendSystemDirect(app, run.ownerId, `user-${run.ownerId}`, body, { event: 'RunFailed', run_id: run.runId, agent_id: run.agentId }, actor);
}
