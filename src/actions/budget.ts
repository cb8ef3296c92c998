import type { App } from '../app.js';
import { goalDecider } from '../commands/goals.js';
import type { BudgetLine, Refusal } from '../commands/task-budget.js';
import { taskDecider } from '../commands/tasks.js';
import { goalStream, type GoalEvent } from '../events/goals.js';
import type { By } from '../events/principals.js';
import { taskStream, type Amount } from '../events/tasks.js';
import { goalTotals, type GoalRow } from '../projections/goal-queries.js';
import { committedInSubtree, getTask, rollupSubtree, type TaskRow } from '../projections/task-queries.js';
import { type CommandOptions } from '../engine/handle.js';
import { sendSystemDirect } from './notifications.js';

/**
 * Budgets, inside the task and run commands' transactions: the facts the budget gate decides on (the
 * task decider for a claim, the run decider for a run), the goal's pause when work was refused for its
 * budget, the reaction to new spend — the goal's (one 80 % alert, the pause at 100 %) and each budgeted
 * task's (its one 80 % alert), each decided by its decider — and the owner's DM whenever a goal pauses.
 */
export type { Refusal };

/**
 * What the budget gate checks work on `task` (null: work on no task) against: the goal's budget with its
 * spend and open reservations, then each budgeted task from `task` up to its root with its subtree's.
 */
export function budgetLines(app: App, goal: GoalRow, task: TaskRow | null): BudgetLine[] {
  const db = app.engine.db;
  const t = goalTotals(db, goal.goalId);
  const lines: BudgetLine[] = [
    {
      scope: 'goal',
      taskId: task?.taskId ?? 0,
      budget: { tokens: goal.budgetTokens, cents: goal.budgetCents },
      committed: { tokens: t.spentTokens + t.reservedTokens, cents: t.spentCents + t.reservedCents },
    },
  ];
  for (const id of task ? [task.taskId, ...task.ancestry.map((a) => a.id).reverse()] : []) {
    const node = id === task!.taskId ? task : getTask(db, id);
    if (!node || (node.budgetTokens === null && node.budgetCents === null)) continue;
    const c = committedInSubtree(db, id);
    lines.push({
      scope: 'task',
      taskId: id,
      budget: { tokens: node.budgetTokens, cents: node.budgetCents },
      committed: { tokens: c.tokens, cents: c.cents },
    });
  }
  return lines;
}

/** A task's open reservation: a claim after its lease ran out replaces it, so the gate does not count it twice. */
export const heldReservation = (task: TaskRow): Amount => ({ tokens: task.reservedTokens, cents: task.reservedCents });

/** A claim refused for the goal's budget pauses the goal (if it still runs). */
export function pauseForBudget(app: App, goal: GoalRow, r: Refusal, by: By, actor: CommandOptions): void {
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
