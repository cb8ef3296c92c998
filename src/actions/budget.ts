import type { App } from '../app.js';
import { goalDecider } from '../commands/goals.js';
import type { BudgetLine, Refusal } from '../commands/task-budget.js';
import { taskDecider } from '../commands/tasks.js';
import { goalStream, type GoalEvent } from '../events/goals.js';
import type { By } from '../events/principals.js';
import { taskStream, type Amount } from '../events/tasks.js';
import { readGoalTotals, type GoalRow } from '../projections/goal-queries.js';
import { readCommittedInSubtree, readRollupSubtree, readTask, type TaskRow } from '../projections/task-queries.js';
import { type CommandOptions } from '../engine/handle.js';
import { applySteps, type Steps } from '../engine/projection-sql.js';
import { decide, runUnit, type Unit } from '../engine/unit-of-work.js';
import { sendSystemDirectUnit } from './notifications.js';

/**
 * Budgets, inside the task and run commands' transactions: the facts the budget gate decides on (the
 * task decider for a claim, the run decider for a run), the goal's pause when work was refused for its
 * budget, the reaction to new spend — the goal's (one 80 % alert, the pause at 100 %) and each budgeted
 * task's (its one 80 % alert), each decided by its decider — and the owner's DM whenever a goal pauses.
 *
 * Each is a unit of work (engine/unit-of-work.ts), so it runs on either store inside its caller's unit;
 * the functions taking `app` run it on SQLite for callers that are not units yet.
 */
export type { Refusal };

/**
 * What the budget gate checks work on `task` (null: work on no task) against: the goal's budget with its
 * spend and open reservations, then each budgeted task from `task` up to its root with its subtree's.
 */
export function* readBudgetLines(goal: GoalRow, task: TaskRow | null): Steps<BudgetLine[]> {
  const t = yield* readGoalTotals(goal.goalId);
  const lines: BudgetLine[] = [
    {
      scope: 'goal',
      taskId: task?.taskId ?? 0,
      budget: { tokens: goal.budgetTokens, cents: goal.budgetCents },
      committed: { tokens: t.spentTokens + t.reservedTokens, cents: t.spentCents + t.reservedCents },
    },
  ];
  for (const id of task ? [task.taskId, ...task.ancestry.map((a) => a.id).reverse()] : []) {
    const node = id === task!.taskId ? task : yield* readTask(id);
    if (!node || (node.budgetTokens === null && node.budgetCents === null)) continue;
    const c = yield* readCommittedInSubtree(id);
    lines.push({
      scope: 'task',
      taskId: id,
      budget: { tokens: node.budgetTokens, cents: node.budgetCents },
      committed: { tokens: c.tokens, cents: c.cents },
    });
  }
  return lines;
}

export const budgetLines = (app: App, goal: GoalRow, task: TaskRow | null): BudgetLine[] =>
  applySteps(app.engine.db, readBudgetLines(goal, task));

/** A task's open reservation: a claim after its lease ran out replaces it, so the gate does not count it twice. */
export const heldReservation = (task: TaskRow): Amount => ({ tokens: task.reservedTokens, cents: task.reservedCents });

/** A claim refused for the goal's budget pauses the goal (if it still runs). */
export function* pauseForBudgetUnit(goal: GoalRow, r: Refusal, by: By): Unit<void> {
  const { events } = yield* decide(goalDecider, goalStream(goal.goalId), {
    type: 'PauseForBudget',
    dimension: r.dimension,
    spent: r.committed,
    requested: r.requested,
    by,
  });
  yield* tellOwnerIfPaused(goal, events);
}

export function pauseForBudget(app: App, goal: GoalRow, r: Refusal, by: By, actor: CommandOptions): void {
  runUnit(app.engine, actor, () => pauseForBudgetUnit(goal, r, by));
}

/** After spend was recorded: the goal decides on the alert and the pause from its new totals. */
export function* applySpendUnit(goal: GoalRow): Unit<void> {
  const t = yield* readGoalTotals(goal.goalId);
  const { events } = yield* decide(goalDecider, goalStream(goal.goalId), {
    type: 'ApplySpend',
    spent: { tokens: t.spentTokens, cents: t.spentCents },
  });
  yield* tellOwnerIfPaused(goal, events);
}

export function applySpend(app: App, goal: GoalRow, actor: CommandOptions): void {
  runUnit(app.engine, actor, () => applySpendUnit(goal));
}

/**
 * After spend was recorded on a task: the task and each budgeted ancestor (a task's budget caps its
 * subtree) decide on their one 80 % alert from their subtree's spend. No pause: the goal's budget pauses.
 */
export function* applyTaskSpendUnit(taskId: number): Unit<void> {
  const task = yield* readTask(taskId);
  if (!task) return;
  for (const id of [task.taskId, ...task.ancestry.map((a) => a.id).reverse()]) {
    const node = id === task.taskId ? task : yield* readTask(id);
    if (!node || ((node.budgetTokens ?? 0) <= 0 && (node.budgetCents ?? 0) <= 0)) continue;
    const spent = yield* readRollupSubtree(id);
    yield* decide(taskDecider, taskStream(id), {
      type: 'ApplyTaskSpend',
      spent: { tokens: spent.tokens, cents: spent.cents },
    });
  }
}

export function applyTaskSpend(app: App, taskId: number, actor: CommandOptions): void {
  runUnit(app.engine, actor, () => applyTaskSpendUnit(taskId));
}

/** Every pause for budget DMs the owner, in the command that paused the goal. */
function* tellOwnerIfPaused(goal: GoalRow, events: readonly GoalEvent[]): Unit<void> {
  const paused = events.find((e) => e.type === 'GoalPaused');
  if (!paused) return;
  yield* sendSystemDirectUnit(
    goal.ownerId,
    `user-${goal.ownerId}`,
    `Goal #${goal.goalId} "${goal.title}" was paused: ${paused.data.notice.body}. Raise the budget and resume it (resume_goal or POST /api/goals/${goal.goalId}/resume).`,
    { event: 'GoalPaused', goal_id: goal.goalId },
  );
}
