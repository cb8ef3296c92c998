import type { App } from '../app.js';
import { taskDecider } from '../commands/tasks.js';
import { DomainError, notFound } from '../errors.js';
import { taskStream, type Amount } from '../events/tasks.js';
import { getMessage } from '../projections/channel-queries.js';
import { getGoal, type GoalRow } from '../projections/goal-queries.js';
import { expiredLeases, getTask, ownerOfTask, type TaskRow } from '../projections/task-queries.js';
import { getAgent, sameLineage } from '../projections/principals.js';
import { runningRunOf } from '../projections/run-queries.js';
import { resolveChannel } from './channels.js';
import { applySpend, applyTaskSpend, budgetError, budgetRefusal, freshClaim, pauseForBudget } from './budget.js';
import { recordVerdicts } from './reputation.js';
import { agentIdOf, isOwner, who } from './goals.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';
import { sendSystemDirect } from './notifications.js';
import { type VerifyTask } from '../commands/task-types.js';

/**
 * The task lifecycle as commands (DESIGN §3.5, §3.6, §3.13; budgets in budget.ts). Every function is one
 * transaction; facts the deciders need — quarantine, goal status, spend — are read inside it, so two racing callers see each
 * other's effects in commit order (SQLite serializes writers).
 */
export const DEFAULT_LEASE_MS = 30 * 60_000;

/** The task and its goal (null for a project task), if the caller's tenant owns it. */
export function taskFor(app: App, by: Speaker, taskId: number): { task: TaskRow; goal: GoalRow | null } {
  const task = getTask(app.engine.db, taskId);
  const goal = task?.goalId != null ? getGoal(app.engine.db, task.goalId) : null;
  const owner = task ? ownerOfTask(app.engine.db, task) : null;
  if (!task || owner === null || (owner !== by.tenant && by.key !== 'system'))
    throw new DomainError('ErrTaskNotFound', `task ${taskId} not found`, { task_id: taskId });
  return { task, goal };
}

function agentOf(app: App, by: Speaker, what: string) {
  const agentId = agentIdOf(by);
  const agent = agentId === null ? null : getAgent(app.engine.db, agentId);
  if (!agent) throw new DomainError('ErrForbidden', `only agents ${what}; owners act through their agents`);
  return agent;
}

export interface Claimed {
  taskId: number;
  status: string;
  claimedAt: string;
  leaseExpiresAt: string;
  renewed: boolean;
}

/**
 * claim_task: a lease on an approved task (or a renewal by its assignee). Work is gated on budget
 * before it starts: a claim whose reservation would take the goal past its budget is refused with
 * ErrGoalBudgetExceeded, and that refusal pauses the goal — committed, although the claim is not.
 */
export function claimTask(
  app: App,
  by: Speaker,
  taskId: number,
  actor: CommandOptions,
  leaseMs = DEFAULT_LEASE_MS,
): Claimed {
  const agent = agentOf(app, by, 'claim tasks');
  const result = app.engine.transact(actor, (uow) => {
    const { task, goal } = taskFor(app, by, taskId);
    checkIndependent(app, task, agent.agentId, 'claim');
    const reservation: Amount = { tokens: 0, cents: task.heartbeat?.max_budget ?? 0 };
    // A project task has no goal, so no goal budget: only the decider's checks apply.
    const refusal =
      !goal || agent.quarantined || !freshClaim(task, goal, uow.now)
        ? null
        : budgetRefusal(app, goal, task, reservation);
    if (refusal) {
      if (refusal.scope === 'goal') pauseForBudget(app, goal!, refusal, who(by), actor);
      return { refused: refusal };
    }
    const handled = app.engine.handle(
      taskDecider,
      taskStream(taskId),
      {
        type: 'ClaimTask',
        agent: {
          agentId: agent.agentId,
          name: agent.name,
          quarantined: agent.quarantined,
          configHash: agent.configHash,
        },
        leaseMs,
        reservation,
        goalStatus: goal?.status ?? null,
      },
      actor,
    );
    const claimed = handled.events.find((e) => e.type === 'TaskClaimed')!;
    return {
      refused: null,
      claimed: claimed.data as { leaseExpiresAt: string; renewed: boolean },
      at: claimed.recordedAt,
    };
  });
  const v = result.value;
  if (!v) return replayedClaim(app, taskId, result.events);
  if (v.refused) throw budgetError(v.refused);
  return {
    taskId,
    status: 'claimed',
    claimedAt: getTask(app.engine.db, taskId)!.claimedAt ?? v.at!,
    leaseExpiresAt: v.claimed!.leaseExpiresAt,
    renewed: v.claimed!.renewed,
  };
}

function replayedClaim(
  app: App,
  taskId: number,
  events: readonly { type: string; data: unknown; recordedAt: string }[],
): Claimed {
  const e = events.find((x) => x.type === 'TaskClaimed');
  if (!e)
    throw new DomainError('ErrGoalBudgetExceeded', 'this claim was refused for budget when it first ran', {
      task_id: taskId,
    });
  const d = e.data as { leaseExpiresAt: string; renewed: boolean };
  return { taskId, status: 'claimed', claimedAt: e.recordedAt, leaseExpiresAt: d.leaseExpiresAt, renewed: d.renewed };
}

export function startTask(app: App, by: Speaker, taskId: number, actor: CommandOptions): TaskRow {
  const agent = agentOf(app, by, 'start tasks');
  app.engine.transact(actor, () => {
    taskFor(app, by, taskId);
    app.engine.handle(
      taskDecider,
      taskStream(taskId),
      { type: 'StartTask', agent: { agentId: agent.agentId, name: agent.name } },
      actor,
    );
  });
  return getTask(app.engine.db, taskId)!;
}

/** complete_task: the assignee hands in its work; an auto verifier decides in the same command. */
export function completeTask(
  app: App,
  by: Speaker,
  taskId: number,
  summary: string,
  artifactMessageIds: number[],
  actor: CommandOptions,
): TaskRow {
  const agent = agentOf(app, by, 'complete tasks');
  app.engine.transact(actor, () => {
    taskFor(app, by, taskId);
    for (const id of artifactMessageIds) {
      const m = getMessage(app.engine.db, id);
      if (!m) throw notFound(`artifact message ${id}`, { message_id: id });
      resolveChannel(app, by, { id: m.channelId });
    }
    const { events } = app.engine.handle(
      taskDecider,
      taskStream(taskId),
      { type: 'CompleteTask', agent: { agentId: agent.agentId, name: agent.name }, summary, artifactMessageIds },
      actor,
    );
    recordVerdicts(app, events, actor);
  });
  return getTask(app.engine.db, taskId)!;
}

export function releaseTask(app: App, by: Speaker, taskId: number, reason: string, actor: CommandOptions): TaskRow {
  const agent = agentOf(app, by, 'release tasks');
  app.engine.transact(actor, () => {
    taskFor(app, by, taskId);
    app.engine.handle(
      taskDecider,
      taskStream(taskId),
      { type: 'ReleaseTask', agent: { agentId: agent.agentId, name: agent.name }, reason },
      actor,
    );
  });
  return getTask(app.engine.db, taskId)!;
}

export function cancelTask(app: App, by: Speaker, taskId: number, reason: string, actor: CommandOptions): TaskRow {
  if (!isOwner(by)) throw new DomainError('ErrForbidden', 'only the owner cancels tasks');
  app.engine.transact(actor, () => {
    taskFor(app, by, taskId);
    app.engine.handle(taskDecider, taskStream(taskId), { type: 'CancelTask', reason, by: who(by) }, actor);
  });
  return getTask(app.engine.db, taskId)!;
}

/**
 * A verdict — from the configured peer (verify_task), the command runner or the auto verifier. A
 * rejection DMs the goal's coordinator (a project task's owner) the task, the verdict and the reason (FR-036), in the same command.
 */
export function verifyTask(
  app: App,
  by: Speaker,
  taskId: number,
  verdict: 'approve' | 'reject',
  reason: string,
  as: VerifyTask['as'],
  actor: CommandOptions,
): TaskRow {
  app.engine.transact(actor, () => {
    const { task, goal } = taskFor(app, by, taskId);
    if (as.kind === 'peer' && task.assigneeAgentId !== null)
      checkIndependent(app, task, task.assigneeAgentId, 'verify');
    const { events } = app.engine.handle(
      taskDecider,
      taskStream(taskId),
      { type: 'VerifyTask', verdict, reason, verifier: who(by), as },
      actor,
    );
    recordVerdicts(app, events, actor);
    if (verdict === 'reject' && goal) {
      sendSystemDirect(
        app,
        goal.ownerId,
        `agent-${goal.coordinatorAgentId}`,
        `Task #${taskId} "${task.title}" failed verification (${as.kind}, verdict reject): ${reason}.${outputTail(as)} Re-plan it, or complete_goal with status "stuck".`,
        { event: 'TaskVerified', task_id: taskId, goal_id: goal.goalId, verdict, reason },
        actor,
      );
    } else if (verdict === 'reject') {
      const owner = ownerOfTask(app.engine.db, task)!;
      sendSystemDirect(
        app,
        owner,
        `user-${owner}`,
        `Task #${taskId} "${task.title}" failed verification (${as.kind}, verdict reject): ${reason}.${outputTail(as)} Retry it with task_dispatch, or cancel it.`,
        { event: 'TaskVerified', task_id: taskId, verdict, reason },
        actor,
      );
    }
  });
  return getTask(app.engine.db, taskId)!;
}

/**
 * report_usage: spend is a fact, always recorded. The budgets react in the same transaction — each
 * budgeted task's one 80 % alert, the goal's too and its pause at 100 % with a DM to the owner — so no reader ever sees spend at or
 * over the budget while the goal still runs.
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
  app.engine.transact(actor, () => {
    const { task, goal } = taskFor(app, by, taskId);
    checkReporter(by, task, goal);
    // Spend reported during one of the reporter's runs is also that run's usage (RunFinished adds its own final figures).
    const reporter = agentIdOf(by);
    const runId = reporter === null ? undefined : runningRunOf(app.engine.db, reporter)?.runId;
    app.engine.handle(
      taskDecider,
      taskStream(taskId),
      { type: 'RecordCost', by: who(by), tokens, cents, note, source, runId },
      actor,
    );
    applyTaskSpend(app, taskId, actor);
    if (goal) applySpend(app, goal, actor);
  });
  const task = getTask(app.engine.db, taskId)!;
  return { goal: task.goalId === null ? null : getGoal(app.engine.db, task.goalId), task };
}

/**
 * A verdict never comes from the agent whose work it judges nor from its spawn lineage (DESIGN §8): the
 * peer verifier may not claim the task, nor may anyone it spawned or that spawned it — checked when the
 * work is claimed, and again when the verdict comes (tasks proposed before the rule).
 */
function checkIndependent(app: App, task: TaskRow, workerId: number, when: 'claim' | 'verify'): void {
  const v = task.verifier;
  if (v.kind !== 'peer' || !sameLineage(app.engine.db, workerId, v.agent_id)) return;
  const message =
    when === 'claim'
      ? `task ${task.taskId} is verified by agent ${v.agent_id}, which is you or in your spawn lineage: a verdict must come from an agent independent of the work, so you may not claim it`
      : `task ${task.taskId}'s assignee is you or in your spawn lineage: a verdict must come from an agent independent of the work`;
  throw new DomainError('ErrSelfVerification', message, { task_id: task.taskId, verifier_agent_id: v.agent_id });
}

/**
 * Spend pauses goals, so not anyone may claim it: the task's assignee (its work), the goal's coordinator
 * (its own runs are charged to the goal), and the owner (or Colony itself). Another agent of the team is refused.
 */
function checkReporter(by: Speaker, task: TaskRow, goal: GoalRow | null): void {
  const agentId = agentIdOf(by);
  if (agentId === null || agentId === task.assigneeAgentId || (goal !== null && agentId === goal.coordinatorAgentId))
    return;
  throw new DomainError(
    'ErrForbidden',
    `only task ${task.taskId}'s assignee, its goal's coordinator or the owner may report usage on it`,
    { task_id: task.taskId },
  );
}

/** The end of a command verifier's output, for the coordinator's DM (the whole 4 KiB tail is on the task). */
function outputTail(as: VerifyTask['as']): string {
  if (as.kind !== 'command' || !as.output.trim()) return '';
  const tail = as.output.trim().slice(-500);
  return `\nOutput (end):\n${tail}\n`;
}

/** The sweeper's command: every lease that ran out by now is expired, each task claimable again. */
export function expireLeases(app: App): number[] {
  const now = app.engine.clock().toISOString();
  const expired: number[] = [];
  for (const taskId of expiredLeases(app.engine.db, now)) {
    const r = app.engine.handle(taskDecider, taskStream(taskId), { type: 'ExpireClaim' }, { actor: 'system' });
    if (r.events.length > 0) expired.push(taskId);
  }
  return expired;
}
