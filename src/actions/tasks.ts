import type { App } from '../app.js';
import { goalDecider } from '../commands/goals.js';
import { taskDecider, type VerifyTask } from '../commands/tasks.js';
import { DomainError, notFound } from '../errors.js';
import { goalStream, type BudgetDimension } from '../events/goals.js';
import { taskStream, type Amount } from '../events/tasks.js';
import { getMessage } from '../projections/channel-queries.js';
import { committedInSubtree, expiredLeases, getGoal, getTask, goalTotals, type GoalRow, type TaskRow } from '../projections/goal-queries.js';
import { getAgent } from '../projections/principals.js';
import { resolveChannel, sendSystemDirect, type Speaker } from './channels.js';
import { recordVerdicts } from './reputation.js';
import { agentIdOf, goalFor, isOwner, who } from './goals.js';
import type { Actor } from './principals.js';

/**
 * The task lifecycle as commands (DESIGN §3.5–3.7, §3.13). Every function is one transaction; facts the
 * deciders need — quarantine, goal status, spend — are read inside it, so two racing callers see each
 * other's effects in commit order (SQLite serializes writers).
 */
export const DEFAULT_LEASE_MS = 30 * 60_000;

export function taskFor(app: App, by: Speaker, taskId: number): { task: TaskRow; goal: GoalRow } {
  const task = getTask(app.engine.db, taskId);
  const goal = task && getGoal(app.engine.db, task.goalId);
  if (!task || !goal || (goal.ownerId !== by.tenant && by.key !== 'system')) throw new DomainError('ErrTaskNotFound', `task ${taskId} not found`, { task_id: taskId });
  return { task, goal };
}

function agentOf(app: App, by: Speaker, what: string) {
  const agentId = agentIdOf(by);
  const agent = agentId === null ? null : getAgent(app.engine.db, agentId);
  if (!agent) throw new DomainError('ErrForbidden', `only agents ${what}; owners act through their agents`);
  return agent;
}

export interface Claimed { taskId: number; status: string; claimedAt: string; leaseExpiresAt: string; renewed: boolean }

/**
 * claim_task: a lease on an approved task (or a renewal by its assignee). Work is gated on budget
 * before it starts: a claim whose reservation would take the goal past its budget is refused with
 * ErrGoalBudgetExceeded, and that refusal pauses the goal — committed, although the claim is not.
 */
export function claimTask(app: App, by: Speaker, taskId: number, actor: Actor, leaseMs = DEFAULT_LEASE_MS): Claimed {
  const agent = agentOf(app, by, 'claim tasks');
  const result = app.engine.transact(actor, (uow) => {
    const { task, goal } = taskFor(app, by, taskId);
    const reservation: Amount = { tokens: 0, cents: task.heartbeat?.max_budget ?? 0 };
    const refusal = agent.quarantined || !freshClaim(task, goal, uow.now) ? null : budgetRefusal(app, goal, task, reservation);
    if (refusal?.scope === 'goal') {
      const { events } = app.engine.handle(goalDecider, goalStream(goal.goalId), { type: 'PauseForBudget', dimension: refusal.dimension, spent: refusal.committed, requested: refusal.requested, by: who(by) }, actor);
      const paused = events.find((e) => e.type === 'GoalPaused');
      if (paused) tellOwnerPaused(app, goal, paused.data.notice.body, actor);
      return { refused: refusal };
    }
    if (refusal) return { refused: refusal };
    const handled = app.engine.handle(taskDecider, taskStream(taskId), {
      type: 'ClaimTask', agent: { agentId: agent.agentId, name: agent.name, quarantined: agent.quarantined, configHash: agent.configHash }, leaseMs, reservation, goalStatus: goal.status,
    }, actor);
    const claimed = handled.events.find((e) => e.type === 'TaskClaimed')!;
    return { refused: null, claimed: claimed.data as { leaseExpiresAt: string; renewed: boolean }, at: claimed.recordedAt };
  });
  const v = result.value;
  if (!v) return replayedClaim(app, taskId, result.events);
  if (v.refused) throw budgetError(v.refused);
  return { taskId, status: 'claimed', claimedAt: getTask(app.engine.db, taskId)!.claimedAt ?? v.at!, leaseExpiresAt: v.claimed!.leaseExpiresAt, renewed: v.claimed!.renewed };
}

function replayedClaim(app: App, taskId: number, events: readonly { type: string; data: unknown; recordedAt: string }[]): Claimed {
  const e = events.find((x) => x.type === 'TaskClaimed');
  if (!e) throw new DomainError('ErrGoalBudgetExceeded', 'this claim was refused for budget when it first ran', { task_id: taskId });
  const d = e.data as { leaseExpiresAt: string; renewed: boolean };
  return { taskId, status: 'claimed', claimedAt: e.recordedAt, leaseExpiresAt: d.leaseExpiresAt, renewed: d.renewed };
}

/**
 * Only a claim the decider would make passes the budget gate: on an approved task, or on one whose lease
 * ran out. Renewals, claims on a task another agent holds, on a task that is not approved or on a closed
 * goal are the decider's to answer (ErrAlreadyClaimed, ErrTaskNotApproved, ErrGoalClosed) — they must
 * not pause the goal for budget.
 */
function freshClaim(task: TaskRow, goal: GoalRow, now: string): boolean {
  if (goal.status === 'completed' || goal.status === 'cancelled') return false;
  if (task.status === 'approved') return true;
  const held = task.status === 'claimed' || task.status === 'in_progress';
  return held && task.leaseExpiresAt !== null && Date.parse(task.leaseExpiresAt) <= Date.parse(now);
}

interface Refusal { scope: 'goal' | 'task'; taskId: number; dimension: BudgetDimension; committed: number; requested: number; budget: number }

/**
 * The first budget the claim would break: the goal's, then each budgeted task from the claimed one up to
 * its root. The task's own open reservation (a lease that ran out) is not counted: this claim replaces it.
 */
function budgetRefusal(app: App, goal: GoalRow, task: TaskRow, reservation: Amount): Refusal | null {
  if (goal.status === 'paused') return null; // the decider refuses a paused goal itself
  const t = goalTotals(app.engine.db, goal.goalId);
  const others = (c: { tokens: number; cents: number }) => ({ tokens: c.tokens - task.reservedTokens, cents: c.cents - task.reservedCents });
  const checks: [Refusal['scope'], number, { tokens: number | null; cents: number | null }, { tokens: number; cents: number }][] = [
    ['goal', goal.goalId, { tokens: goal.budgetTokens, cents: goal.budgetCents }, others({ tokens: t.spentTokens + t.reservedTokens, cents: t.spentCents + t.reservedCents })],
  ];
  for (const id of [task.taskId, ...task.ancestry.map((a) => a.id).reverse()]) {
    const node = id === task.taskId ? task : getTask(app.engine.db, id);
    if (node && (node.budgetTokens !== null || node.budgetCents !== null)) {
      checks.push(['task', id, { tokens: node.budgetTokens, cents: node.budgetCents }, others(committedInSubtree(app.engine.db, id))]);
    }
  }
  for (const [scope, id, budget, committed] of checks) {
    for (const dimension of ['tokens', 'cents'] as const) {
      const cap = budget[dimension];
      const requested = reservation[dimension];
      if (cap === null || cap <= 0) continue;
      if (committed[dimension] + requested > cap || committed[dimension] >= cap) {
        return { scope, taskId: scope === 'task' ? id : task.taskId, dimension, committed: committed[dimension], requested, budget: cap };
      }
    }
  }
  return null;
}

function budgetError(r: Refusal): DomainError {
  const what = r.scope === 'goal' ? 'the goal\'s' : `task ${r.taskId}'s`;
  const code = r.scope === 'goal' ? 'ErrGoalBudgetExceeded' : 'ErrTaskBudgetExceeded';
  const paused = r.scope === 'goal' ? '; the goal is paused until the owner raises the budget and resumes it' : '';
  return new DomainError(code, `${what} ${r.dimension} budget would be exceeded: ${r.committed} committed + ${r.requested} requested > ${r.budget}${paused}`,
    { scope: r.scope, task_id: r.taskId, dimension: r.dimension, committed: r.committed, requested: r.requested, budget: r.budget });
}

export function startTask(app: App, by: Speaker, taskId: number, actor: Actor): TaskRow {
  const agent = agentOf(app, by, 'start tasks');
  app.engine.transact(actor, () => {
    taskFor(app, by, taskId);
    app.engine.handle(taskDecider, taskStream(taskId), { type: 'StartTask', agent: { agentId: agent.agentId, name: agent.name } }, actor);
  });
  return getTask(app.engine.db, taskId)!;
}

/** complete_task: the assignee hands in its work; an auto verifier decides in the same command. */
export function completeTask(app: App, by: Speaker, taskId: number, summary: string, artifactMessageIds: number[], actor: Actor): TaskRow {
  const agent = agentOf(app, by, 'complete tasks');
  app.engine.transact(actor, () => {
    taskFor(app, by, taskId);
    for (const id of artifactMessageIds) {
      const m = getMessage(app.engine.db, id);
      if (!m) throw notFound(`artifact message ${id}`, { message_id: id });
      resolveChannel(app, by, { id: m.channelId });
    }
    const { events } = app.engine.handle(taskDecider, taskStream(taskId), { type: 'CompleteTask', agent: { agentId: agent.agentId, name: agent.name }, summary, artifactMessageIds }, actor);
    recordVerdicts(app, events, actor);
  });
  return getTask(app.engine.db, taskId)!;
}

export function releaseTask(app: App, by: Speaker, taskId: number, reason: string, actor: Actor): TaskRow {
  const agent = agentOf(app, by, 'release tasks');
  app.engine.transact(actor, () => {
    taskFor(app, by, taskId);
    app.engine.handle(taskDecider, taskStream(taskId), { type: 'ReleaseTask', agent: { agentId: agent.agentId, name: agent.name }, reason }, actor);
  });
  return getTask(app.engine.db, taskId)!;
}

export function cancelTask(app: App, by: Speaker, taskId: number, reason: string, actor: Actor): TaskRow {
  if (!isOwner(by)) throw new DomainError('ErrForbidden', 'only the owner cancels tasks');
  app.engine.transact(actor, () => {
    taskFor(app, by, taskId);
    app.engine.handle(taskDecider, taskStream(taskId), { type: 'CancelTask', reason, by: who(by) }, actor);
  });
  return getTask(app.engine.db, taskId)!;
}

/**
 * A verdict — from the configured peer (verify_task), the command runner or the auto verifier. A
 * rejection DMs the goal's coordinator the task, the verdict and the reason (FR-036), in the same command.
 */
export function verifyTask(app: App, by: Speaker, taskId: number, verdict: 'approve' | 'reject', reason: string, as: VerifyTask['as'], actor: Actor): TaskRow {
  app.engine.transact(actor, () => {
    const { task, goal } = taskFor(app, by, taskId);
    const { events } = app.engine.handle(taskDecider, taskStream(taskId), { type: 'VerifyTask', verdict, reason, verifier: who(by), as }, actor);
    recordVerdicts(app, events, actor);
    if (verdict === 'reject') {
      sendSystemDirect(app, goal.ownerId, `agent-${goal.coordinatorAgentId}`,
        `Task #${taskId} "${task.title}" failed verification (${as.kind}, verdict reject): ${reason}.${outputTail(as)} Re-plan it, or complete_goal with status "stuck".`,
        { event: 'TaskVerified', task_id: taskId, goal_id: goal.goalId, verdict, reason }, actor);
    }
  });
  return getTask(app.engine.db, taskId)!;
}

/**
 * report_usage: spend is a fact, always recorded. The goal's budget reacts in the same transaction —
 * the one 80 % alert, the pause at 100 % with a DM to the owner — so no reader ever sees spend at or
 * over the budget while the goal still runs.
 */
export function reportUsage(app: App, by: Speaker, taskId: number, tokens: number, cents: number, note: string | null, actor: Actor, source: 'report_usage' | 'run' = 'report_usage'): { goal: GoalRow; task: TaskRow } {
  app.engine.transact(actor, () => {
    const { goal } = taskFor(app, by, taskId);
    app.engine.handle(taskDecider, taskStream(taskId), { type: 'RecordCost', by: who(by), tokens, cents, note, source }, actor);
    const t = goalTotals(app.engine.db, goal.goalId);
    const { events } = app.engine.handle(goalDecider, goalStream(goal.goalId), { type: 'ApplySpend', spent: { tokens: t.spentTokens, cents: t.spentCents } }, actor);
    const paused = events.find((e) => e.type === 'GoalPaused');
    if (paused) tellOwnerPaused(app, goal, paused.data.notice.body, actor);
  });
  return { goal: getGoal(app.engine.db, getTask(app.engine.db, taskId)!.goalId)!, task: getTask(app.engine.db, taskId)! };
}

/** The end of a command verifier's output, for the coordinator's DM (the whole 4 KiB tail is on the task). */
function outputTail(as: VerifyTask['as']): string {
  if (as.kind !== 'command' || !as.output.trim()) return '';
  const tail = as.output.trim().slice(-500);
  return `\nOutput (end):\n${tail}\n`;
}

/** Every pause for budget DMs the owner, in the command that paused the goal. */
function tellOwnerPaused(app: App, goal: GoalRow, why: string, actor: Actor): void {
  sendSystemDirect(app, goal.ownerId, `user-${goal.ownerId}`,
    `Goal #${goal.goalId} "${goal.title}" was paused: ${why}. Raise the budget and resume it (resume_goal or POST /api/goals/${goal.goalId}/resume).`,
    { event: 'GoalPaused', goal_id: goal.goalId }, actor);
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
