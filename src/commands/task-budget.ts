import { DomainError } from '../errors.js';
import type { BudgetDimension } from '../events/goals.js';
import type { Amount } from '../events/tasks.js';

/**
 * The budget gate work passes before it starts (a claim, a run): what is already committed under a budget
 * (spend and open reservations) plus what the work asks for must stay within it. The goal's budget is
 * checked first, then each budgeted task from the one worked on up to its root (a task's budget caps its
 * subtree); the first budget the work would break refuses it. Pure: the budgets and what is committed
 * under them are facts the caller reads in the same transaction.
 */
export interface BudgetLine {
  scope: 'goal' | 'task';
  /** The budgeted task (scope task), or the task the work is on (scope goal; 0 for work on no task). */
  taskId: number;
  budget: { tokens: number | null; cents: number | null };
  /** Spend plus open reservations under this budget. */
  committed: Amount;
}

export interface Refusal {
  scope: 'goal' | 'task';
  taskId: number;
  dimension: BudgetDimension;
  committed: number;
  requested: number;
  budget: number;
}

export const NOTHING: Amount = { tokens: 0, cents: 0 };

/**
 * The first budget `requested` would break, or null. `replaced` is the open reservation the work takes
 * over (a claim on a task whose lease ran out replaces that lease's reservation), so it is not counted.
 * A budget that is already used up refuses even work that asks for nothing.
 */
export function budgetRefusal(
  lines: readonly BudgetLine[],
  requested: Amount,
  replaced: Amount = NOTHING,
): Refusal | null {
  for (const line of lines) {
    for (const dimension of ['tokens', 'cents'] as const) {
      const cap = line.budget[dimension];
      if (cap === null || cap <= 0) continue;
      const committed = line.committed[dimension] - replaced[dimension];
      const asked = requested[dimension];
      if (committed + asked > cap || committed >= cap)
        return { scope: line.scope, taskId: line.taskId, dimension, committed, requested: asked, budget: cap };
    }
  }
  return null;
}

/**
 * A claim refused for budget: ErrGoalBudgetExceeded for the goal's budget (the goal pauses until the
 * owner raises it), ErrTaskBudgetExceeded for a task's. It carries the refusal, which the caller routes
 * to the goal (the pause) before it answers.
 */
export class BudgetExceeded extends DomainError {
  constructor(readonly refusal: Refusal) {
    const r = refusal;
    const what = r.scope === 'goal' ? "the goal's" : `task ${r.taskId}'s`;
    const paused = r.scope === 'goal' ? '; the goal is paused until the owner raises the budget and resumes it' : '';
    super(
      r.scope === 'goal' ? 'ErrGoalBudgetExceeded' : 'ErrTaskBudgetExceeded',
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
}
