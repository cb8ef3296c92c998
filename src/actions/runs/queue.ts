import { randomBytes } from 'node:crypto';
import type { App } from '../../app.js';
import { runDecider } from '../../commands/runs.js';
import { taskDecider } from '../../commands/tasks.js';
import { DomainError, notFound } from '../../errors.js';
import { runStream, type RunStarted, type Wake, type WakeSource } from '../../events/runs.js';
import { taskStream } from '../../events/tasks.js';
import { getTask, type TaskRow } from '../../projections/task-queries.js';
import { getAgent, type AgentRow } from '../../projections/principal-queries.js';
import { getRun, queuedRunFor, type RunRow } from '../../projections/run-queries.js';
import { heldReservation } from '../budget.js';
import { agentFacts, gateFacts, pauseIfRefusedForBudget, waitFacts } from './gates.js';
import { runtimeSettings } from './settings.js';
import { wakePrompt } from './prompt.js';
import { checkWakeRate, tripWakeDepth } from '../breakers/detectors.js';
import { type CommandOptions } from '../../engine/handle.js';

/**
 * Wake-ups become runs, each in one transaction. A wake-up merges into the queued run of the same
 * (agent, task, goal) if there is one (coalescing; an execute_agent call always gets a run of its own), else it
 * is a new run, which the run decider refuses at a gate or queues. Any process may queue (the CLI does);
 * only the serving runtime starts runs: it tails the log, and `startQueuedRun` routes the start to the
 * decider, which checks the gates again in the transaction that appends `RunStarted`, so a paused goal
 * never gets a new process. The process is the runtime's (after commit); its outcome comes back through
 * `finishRun` / `failRun` (runs.ts).
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
    const task = req.taskId ? getTask(db, req.taskId) : null;
    if (req.taskId && !task)
      throw new DomainError('ErrTaskNotFound', `task ${req.taskId} not found`, { task_id: req.taskId });
    const goalId = task?.goalId ?? req.goalId ?? null;
    const wake: Wake = { source: req.source, messageIds: req.messageIds ?? [], prompt: req.prompt ?? null, by: req.by };
    const waiting =
      req.source === 'execute_agent' ? null : queuedRunFor(db, agent.agentId, task?.taskId ?? null, goalId);
    if (waiting) {
      const merge = { type: 'MergeWake' as const, wake, agent: agentFacts(app, agent) };
      app.engine.handle(runDecider, runStream(waiting.runId), merge, actor);
      return { kind: 'merged' as const, runId: waiting.runId };
    }
    const runId = uow.ids.next('run');
    checkWakeRate(app, { agentId: agent.agentId, goalId, source: req.source }, uow.now, actor);
    const gates = gateFacts(app, agent, goalId, task, uow.now);
    const run = {
      runId,
      agentId: agent.agentId,
      ownerId: agent.ownerId,
      sessionId: randomBytes(6).toString('hex'),
      taskId: task?.taskId ?? null,
      goalId,
      depth: req.depth ?? 0,
      wake,
    };
    const wait = waitFacts(app, agent.agentId);
    const { events } = app.engine.handle(runDecider, runStream(runId), { type: 'QueueRun', run, gates, wait }, actor);
    pauseIfRefusedForBudget(app, events, gates, actor);
    const refused = events.some((e) => e.type === 'RunRefused');
    if (refused && getRun(db, runId)?.gate === 'trigger_depth')
      tripWakeDepth(app, getRun(db, runId)!, gates.maxTriggerDepth, actor);
    return { kind: refused ? ('refused' as const) : ('queued' as const), runId };
  });
  const runId = r.value?.runId ?? (r.events[0]?.data as { runId: number }).runId;
  return { kind: r.value?.kind ?? 'queued', run: getRun(db, runId)! };
}

/**
 * Starts a queued run when the run decider says so (its agent free and out of its cooldown, every gate
 * passed), then its task's claimed → in_progress and the wake prompt as the session's first message.
 * Returns the run when it started, null when it still waits, was refused or failed (or was no longer queued).
 */
export function startQueuedRun(app: App, runId: number, actor: CommandOptions = SYSTEM): RunRow | null {
  const db = app.engine.db;
  const started = app.engine.transact(actor, (uow) => {
    const run = getRun(db, runId);
    if (!run || run.status !== 'queued') return false;
    const agent = getAgent(db, run.agentId);
    const task = run.taskId ? getTask(db, run.taskId) : null;
    const facts = agent && {
      gates: gateFacts(app, agent, run.goalId, task, uow.now),
      start: startOf(app, agent, run, task),
    };
    const { events } = app.engine.handle(
      runDecider,
      runStream(runId),
      { type: 'StartRun', wait: waitFacts(app, run.agentId), agent: facts },
      actor,
    );
    if (facts) pauseIfRefusedForBudget(app, events, facts.gates, actor);
    if (!agent || !events.some((e) => e.type === 'RunStarted')) return false;
    if (task) {
      const start = { type: 'StartTask' as const, agent: { agentId: agent.agentId, name: agent.name }, byRun: true };
      app.engine.handle(taskDecider, taskStream(task.taskId), start, actor);
    }
    const prompt = wakePrompt(db, agent, getRun(db, runId)!);
    app.engine.handle(
      runDecider,
      runStream(runId),
      { type: 'RecordSessionMessage', role: 'user', content: prompt },
      actor,
    );
    return true;
  });
  return started.value ? getRun(db, runId) : null;
}

/** RunStarted as it would be recorded: the agent's config, the task's reservation held for the run, its timeout. */
function startOf(app: App, agent: AgentRow, run: RunRow, task: TaskRow | null): RunStarted['data'] {
  return {
    runId: run.runId,
    agentId: agent.agentId,
    configHash: agent.configHash,
    reservation: task ? heldReservation(task) : { tokens: 0, cents: 0 },
    traceId: randomBytes(16).toString('hex'),
    timeoutSec: runtimeSettings(app.engine.db, agent.agentId).timeoutSec,
  };
}
