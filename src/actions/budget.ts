import type { App } from '../app.js';
import { goalDecider, type Who } from '../commands/goals.js';
import { taskDecider } from '../commands/tasks.js';
import { DomainError } from '../errors.js';
import { goalStream, type BudgetDimension, type GoalEvent } from '../events/goals.js';
import { taskStream, type Amount } from '../events/tasks.js';
import { goalTotals, type GoalRow } from '../projections/goal-queries.js';
import { committedInSubtree, getTask, rollupSubtree, type TaskRow } from '../projections/task-queries.js';
import { type CommandOptions } from '../engine/handle.js';
import { sendSystemDirect } from './notifications.js';

/**
 * Budgets (DESIGN §3.7), inside the task commands' transactions: the gate a claim passes before work
 * starts (goal budget, then each budgeted ancestor task), the goal's reaction to new spend (one 80 %
 * alert, the pause at 100 %), each budgeted task's (its own one 80 % alert), and the owner's DM whenever
 * a goal pauses for budget.
 */
/**
 * Only a claim the decider would make passes the budget gate: on an approved task, or on one whose lease
 * ran out. Renewals, claims on a task another agent holds, on a task that is not approved or on a closed
 * goal are the decider's to answer (ErrAlreadyClaimed, ErrTaskNotApproved, ErrGoalClosed) — they must
 * not pause the goal for budget.
 */
export function freshClaim(task: TaskRow, goal: GoalRow, now: string): boolean {
  if (goal.status === 'completed' || goal.status === 'cancelled') return false;
  if (task.status === 'approved') return true;
  const held = task.status === 'claimed' || task.status === 'in_progress';
  return held && task.leaseExpiresAt !== null && Date.parse(task.leaseExpiresAt) <= Date.parse(now);
}

export interface Refusal {
  scope: 'goal' | 'task';
  taskId: number;
  dimension: BudgetDimension;
  committed: number;
  requested: number;
  budget: number;
}

/**
 * The first budget the claim would break: the goal's, then each budgeted task from the claimed one up to
 * its root. The task's own open reservation (a lease that ran out) is not counted: this claim replaces it.
 */
export function budgetRefusal(app: App, goal: GoalRow, task: TaskRow, reservation: Amount): Refusal | null {
  if (goal.status === 'paused') return null; // the decider refuses a paused goal itself
  const t = goalTotals(app.engine.db, goal.goalId);
  const others = (c: { tokens: number; cents: number }) => ({
    tokens: c.tokens - task.reservedTokens,
    cents: c.cents - task.reservedCents,
  });
  const checks: [
    Refusal['scope'],
    number,
    { tokens: number | null; cents: number | null },
    { tokens: number; cents: number },
  ][] = [
    [
      'goal',
      goal.goalId,
      { tokens: goal.budgetTokens, cents: goal.budgetCents },
      others({ tokens: t.spentTokens + t.reservedTokens, cents: t.spentCents + t.reservedCents }),
    ],
  ];
  for (const id of [task.taskId, ...task.ancestry.map((a) => a.id).reverse()]) {
    const node = id === task.taskId ? task : getTask(app.engine.db, id);
    if (node && (node.budgetTokens !== null || node.budgetCents !== null)) {
      checks.push([
        'task',
        id,
        { tokens: node.budgetTokens, cents: node.budgetCents },
        others(committedInSubtree(app.engine.db, id)),
      ]);
    }
  }
  for (const [scope, id, budget, committed] of checks) {
    for (const dimension of ['tokens', 'cents'] as const) {
      const cap = budget[dimension];
      const requested = reservation[dimension];
      if (cap === null || cap <= 0) continue;
      if (committed[dimension] + requested > cap || committed[dimension] >= cap) {
        return {
          scope,
          taskId: scope === 'task' ? id : task.taskId,
          dimension,
          committed: committed[dimension],
          requested,
          budget: cap,
        };
      }
    }
  }
  return null;
}

export function budgetError(r: Refusal): DomainError {
  const what = r.scope === 'goal' ? "the goal's" : `task ${r.taskId}'s`;
  const code = r.scope === 'goal' ? 'ErrGoalBudgetExceeded' : 'ErrTaskBudgetExceeded';
  const paused = r.scope === 'goal' ? '; the goal is paused until the owner raises the budget and resumes it' : '';
  return new DomainError(
    code,
    `${what} ${r.dimension} budget would be exceeded: ${r.committed} committed + ${r.requested} requested > ${r.budget}${paused}`,
    {
      scope: r.scope,
      task_id: r.taskId,
      dimension: r.dimension,
      committed: r.committed,
      requested: r.requested,
      budget: r.budget,
    },
  );
}

/** A claim refused for the goal's budget pauses the goal (if it still runs). */
export function pauseForBudget(app: App, goal: GoalRow, r: Refusal, by: Who, actor: CommandOptions): void {
  const { events } = app.engine.handle(
    goalDecider,
    goalStream(goal.goalId),
    { type: 'PauseForBudget', dimension: r.dimension, spent: r.committed, requested: r.requested, by },
    actor,
  );
  tellOwnerIfPaused(app, goal, events, actor);
}

/** After spend was recorded: the goal decides on the alert and the pause from its new totals. */
export function applySpend(app: App, goal: GoalRow, actor: CommandOptions): void {
  const t = goalTotals(app.engine.db, goal.goalId);
  const { events } = app.engine.handle(
    goalDecider,
    goalStream(goal.goalId),
    { type: 'ApplySpend', spent: { tokens: t.spentTokens, cents: t.spentCents } },
    actor,
  );
  tellOwnerIfPaused(app, goal, events, actor);
}

/**
 * After spend was recorded on a task: the task and each budgeted ancestor (a task's budget caps its
 * subtree) decide on their one 80 % alert from their subtree's spend. No pause: the goal's budget pauses.
 */
export function applyTaskSpend(app: App, taskId: number, actor: CommandOptions): void {
  const task = getTask(app.engine.db, taskId);
  if (!task) return;
  for (const id of [task.taskId, ...task.ancestry.map((a) => a.id).reverse()]) {
    const node = id === task.taskId ? task : getTask(app.engine.db, id);
    if (!node || ((node.budgetTokens ?? 0) <= 0 && (node.budgetCents ?? 0) <= 0)) continue;
    const spent = rollupSubtree(app.engine.db, id);
    app.engine.handle(
      taskDecider,
      taskStream(id),
      { type: 'ApplyTaskSpend', spent: { tokens: spent.tokens, cents: spent.cents } },
      actor,
    );
  }
}

/** Every pause for budget DMs the owner, in the command that paused the goal. */
function tellOwnerIfPaused(app: App, goal: GoalRow, events: readonly GoalEvent[], actor: CommandOptions): void {
  const paused = events.find((e) => e.type === 'GoalPaused');
  if (!paused) return;
  sendSystemDirect(
    app,
    goal.ownerId,
    `user-${goal.ownerId}`,
    `Goal #${goal.goalId} "${goal.title}" was paused: ${paused.data.notice.body}. Raise the budget and resume it (resume_goal or POST /api/goals/${goal.goalId}/resume).`,
    { event: 'GoalPaused', goal_id: goal.goalId },
    actor,
  );
}
