import type { App } from '../app.js';
import { taskDecider } from '../commands/tasks.js';
import { notFound } from '../errors.js';
import { taskStream } from '../events/tasks.js';
import { getMessage } from '../projections/channel-queries.js';
import { getGoal, type GoalRow } from '../projections/goal-queries.js';
import { getTask, readExpiredLeases, readTask, type TaskRow } from '../projections/task-queries.js';
import { hasChildren } from '../projections/evidence-queries.js';
import { readRunningRun } from '../projections/run-queries.js';
import { resolveChannel } from './channels.js';
import { applySpendUnit, applyTaskSpendUnit } from './budget.js';
import { recordVerdicts } from './reputation.js';
import { agentIdOf, who } from './goals.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';
import { applySteps } from '../engine/projection-sql.js';
import { decide, runUnit, type Unit } from '../engine/unit-of-work.js';
import { findTask, readCallerAgent, taskFor } from './tasks/lookup.js';

/**
 * The task lifecycle as commands (budgets in budget.ts). Every function is one transaction: it finds the
 * task, reads the facts the task decider needs — the calling agent, the goal, spend, spawn lineage —
 * inside it, and routes the command; two racing callers see each other's effects in commit order (SQLite
 * serializes writers). Who may do what is the decider's to say.
 */
export { taskFor, type FoundTask } from './tasks/lookup.js';
export { claimTask, DEFAULT_LEASE_MS, type Claimed } from './tasks/claim.js';
export { verifyTask } from './tasks/verdicts.js';

/** The calling agent as the task decider sees it; null when the caller is no agent. */
function* readAgentRef(by: Speaker) {
  const agent = yield* readCallerAgent(by);
  return agent && { agentId: agent.agentId, name: agent.name };
}
const agentRef = (app: App, by: Speaker) => applySteps(app.engine.db, readAgentRef(by));

export function startTask(app: App, by: Speaker, taskId: number, actor: CommandOptions): TaskRow {
  runUnit(app.engine, actor, () => startTaskUnit(by, taskId));
  return getTask(app.engine.db, taskId)!;
}

/** start_task as a unit of work (engine/unit-of-work.ts), on either store: the task as it is after. */
export function* startTaskUnit(by: Speaker, taskId: number): Unit<TaskRow> {
  yield* findTask(by, taskId);
  yield* decide(taskDecider, taskStream(taskId), { type: 'StartTask', agent: yield* readAgentRef(by) });
  return (yield* readTask(taskId))!;
}

/**
 * complete_task: the assignee hands in its work, naming messages it can see; an auto verifier decides in the
 * same command — unless the goal requires evidence and the task is a leaf: then the owner decides.
 */
export function completeTask(
  app: App,
  by: Speaker,
  taskId: number,
  summary: string,
  artifactMessageIds: number[],
  actor: CommandOptions,
): TaskRow {
  app.engine.transact(actor, () => {
    const { goal } = taskFor(app, by, taskId);
    for (const id of artifactMessageIds) {
      const m = getMessage(app.engine.db, id);
      if (!m) throw notFound(`artifact message ${id}`, { message_id: id });
      resolveChannel(app, by, { id: m.channelId });
    }
    const { events } = app.engine.handle(
      taskDecider,
      taskStream(taskId),
      {
        type: 'CompleteTask',
        agent: agentRef(app, by),
        summary,
        artifactMessageIds,
        ownerVerifies: goal?.requireEvidence === true && !hasChildren(app.engine.db, taskId),
      },
      actor,
    );
    recordVerdicts(app, events, actor);
  });
  return getTask(app.engine.db, taskId)!;
}

export function releaseTask(app: App, by: Speaker, taskId: number, reason: string, actor: CommandOptions): TaskRow {
  runUnit(app.engine, actor, () => releaseTaskUnit(by, taskId, reason));
  return getTask(app.engine.db, taskId)!;
}

export function* releaseTaskUnit(by: Speaker, taskId: number, reason: string): Unit<TaskRow> {
  yield* findTask(by, taskId);
  yield* decide(taskDecider, taskStream(taskId), { type: 'ReleaseTask', agent: yield* readAgentRef(by), reason });
  return (yield* readTask(taskId))!;
}

export function cancelTask(app: App, by: Speaker, taskId: number, reason: string, actor: CommandOptions): TaskRow {
  runUnit(app.engine, actor, () => cancelTaskUnit(by, taskId, reason));
  return getTask(app.engine.db, taskId)!;
}

export function* cancelTaskUnit(by: Speaker, taskId: number, reason: string): Unit<TaskRow> {
  const { ownerId } = yield* findTask(by, taskId);
  yield* decide(taskDecider, taskStream(taskId), { type: 'CancelTask', reason, by: who(by), ownerId });
  return (yield* readTask(taskId))!;
}

/**
 * report_usage: spend is a fact, recorded once the decider accepts the reporter. The budgets react in the
 * same transaction — each budgeted task's one 80 % alert, the goal's too and its pause at 100 % with a DM
 * to the owner — so no reader ever sees spend at or over the budget while the goal still runs.
 */
export function reportUsage(
  app: App,
  by: Speaker,
  taskId: number,
  tokens: number,
  cents: number,
  note: string | null,
  actor: CommandOptions,
  source: 'report_usage' | 'run' = 'report_usage',
): { goal: GoalRow | null; task: TaskRow } {
  runUnit(app.engine, actor, () => reportUsageUnit(by, taskId, { tokens, cents, note, source }));
  const task = getTask(app.engine.db, taskId)!;
  return { goal: task.goalId === null ? null : getGoal(app.engine.db, task.goalId), task };
}

/** report_usage as a unit of work (engine/unit-of-work.ts), on either store. */
export function* reportUsageUnit(
  by: Speaker,
  taskId: number,
  usage: { tokens: number; cents: number; note: string | null; source: 'report_usage' | 'run' },
): Unit<void> {
  const { goal } = yield* findTask(by, taskId);
  // Spend reported during one of the reporter's runs is also that run's usage (RunFinished adds its own final figures).
  const reporter = agentIdOf(by);
  const runId = reporter === null ? undefined : (yield* readRunningRun(reporter))?.runId;
  yield* decide(taskDecider, taskStream(taskId), {
    type: 'RecordCost',
    by: who(by),
    ...usage,
    runId,
    reporter: { agentId: reporter, coordinatorAgentId: goal?.coordinatorAgentId ?? null },
  });
  yield* applyTaskSpendUnit(taskId);
  if (goal) yield* applySpendUnit(goal);
}

/** The sweeper's command: every lease that ran out by now is expired, each task claimable again. */
export function expireLeases(app: App): number[] {
  const now = app.engine.clock().toISOString();
  return runUnit(app.engine, { actor: 'system' }, () => expireLeasesUnit(now)).value!;
}

/** The sweep as a unit of work, on either store: the tasks whose claim it expired. */
export function* expireLeasesUnit(now: string): Unit<number[]> {
  const expired: number[] = [];
  for (const taskId of yield* readExpiredLeases(now)) {
    const r = yield* decide(taskDecider, taskStream(taskId), { type: 'ExpireClaim' });
    if (r.events.length > 0) expired.push(taskId);
  }
  return expired;
}
