import { DomainError } from '../errors.js';
import type { BudgetDimension, Budgets, GoalEvent } from '../events/goals.js';
import type { By } from '../events/principals.js';
import type { DecideContext } from '../engine/decider.js';
import { illegal, isGoalOwner, notice, type Live } from './goal-state.js';

/**
 * A goal's budgets: the soft alert at 80 % (once per budget until a resume re-arms it), the pause at
 * 100 %, the pause when work is refused for budget, and the owner's resume with new budgets. Each takes
 * the goal's current spend as a fact read in the same transaction.
 */
export interface Spend {
  tokens: number;
  cents: number;
}

/** After spend changed: raise the 80 % alert once, pause at 100 %. */
export type ApplySpend = { type: 'ApplySpend'; spent: Spend };
/** Work was refused for budget: the goal pauses (if it still runs). */
export type PauseForBudget = {
  type: 'PauseForBudget';
  dimension: BudgetDimension;
  spent: number;
  requested: number;
  by: By;
};
/** Only the goal's owner resumes it (`by` is who asks). */
export type ResumeGoal = { type: 'ResumeGoal'; budgets: Partial<Budgets>; spent: Spend; by: By };

const DIMENSIONS: readonly BudgetDimension[] = ['tokens', 'cents'];
const UNIT: Record<BudgetDimension, string> = { tokens: 'tokens', cents: '¢' };

export function applySpend(state: Live, spent: Spend, ctx: DecideContext): GoalEvent[] {
  const events: GoalEvent[] = [];
  let paused = false;
  for (const dimension of DIMENSIONS) {
    const budget = state.budgets[dimension];
    if (budget === null || budget <= 0) continue;
    const used = spent[dimension];
    const percent = Math.floor((used / budget) * 100);
    if (!state.alerted[dimension] && used * 10 >= budget * 8) {
      events.push({
        type: 'BudgetAlertRaised',
        data: {
          goalId: state.goalId,
          dimension,
          spent: used,
          budget,
          percent,
          notice: notice(
            state,
            ctx,
            `⚠️ Budget soft alert: goal "${state.title}" has used ${percent}% of its ${dimension} budget (${used} of ${budget} ${UNIT[dimension]})`,
            { event: 'BudgetAlertRaised', dimension, spent: used, budget, percent },
          ),
        },
      });
    }
    if (!paused && state.status === 'active' && used >= budget) {
      paused = true;
      events.push({
        type: 'GoalPaused',
        data: {
          goalId: state.goalId,
          from: 'active',
          reason: 'budget',
          dimension,
          spent: used,
          requested: 0,
          budget,
          notice: notice(
            state,
            ctx,
            `🛑 Budget hard cap: goal "${state.title}" at ${percent}% of its ${dimension} budget (${used} of ${budget} ${UNIT[dimension]}): active → paused`,
            { event: 'GoalPaused', from: 'active', to: 'paused', dimension, spent: used, budget, percent },
          ),
        },
      });
    }
  }
  return events;
}

export function pauseForBudget(state: Live, c: PauseForBudget, ctx: DecideContext): GoalEvent[] {
  if (state.status !== 'active') return [];
  const budget = state.budgets[c.dimension]!;
  const body = `Goal "${state.title}": active → paused — budget exhausted: ${c.spent} + ${c.requested} ${UNIT[c.dimension]} requested > ${budget} (refused work of ${c.by.name})`;
  return [
    {
      type: 'GoalPaused',
      data: {
        goalId: state.goalId,
        from: 'active',
        reason: 'budget',
        dimension: c.dimension,
        spent: c.spent,
        requested: c.requested,
        budget,
        notice: notice(state, ctx, body, {
          event: 'GoalPaused',
          from: 'active',
          to: 'paused',
          dimension: c.dimension,
          actor: c.by.name,
        }),
      },
    },
  ];
}

/**
 * The owner sets a paused or stuck goal active again, optionally with new budgets; an active goal only
 * takes new budgets. Refused while the spend is at or over a (new) budget: raise it to resume. An alert
 * is re-armed when the spend is below 80 % of the new budget.
 */
export function resume(state: Live, c: ResumeGoal, ctx: DecideContext): GoalEvent[] {
  if (!isGoalOwner(state, c.by.key)) throw new DomainError('ErrForbidden', "only the goal's owner may resume it");
  if (state.status !== 'paused' && state.status !== 'stuck') {
    if (state.status === 'active' && c.budgets.tokens === undefined && c.budgets.cents === undefined) return [];
    if (state.status !== 'active') throw illegal(state.status, 'active');
  }
  const budgets: Budgets = {
    tokens: c.budgets.tokens ?? state.budgets.tokens,
    cents: c.budgets.cents ?? state.budgets.cents,
  };
  for (const dimension of DIMENSIONS) {
    const budget = budgets[dimension];
    if (budget !== null && budget > 0 && c.spent[dimension] >= budget) {
      throw new DomainError(
        'ErrGoalBudgetExceeded',
        `the goal has spent ${c.spent[dimension]} of its ${budget} ${UNIT[dimension]} ${dimension} budget: raise it to resume`,
        { dimension, spent: c.spent[dimension], budget },
      );
    }
  }
  const rearm = {
    tokens: budgets.tokens !== null && c.spent.tokens * 10 < budgets.tokens * 8,
    cents: budgets.cents !== null && c.spent.cents * 10 < budgets.cents * 8,
  };
  return [
    {
      type: 'GoalResumed',
      data: {
        goalId: state.goalId,
        from: state.status,
        budgets,
        rearm,
        notice: notice(
          state,
          ctx,
          `Goal "${state.title}": ${state.status} → active by ${c.by.name} (budget ${fmt(budgets)})`,
          { event: 'GoalResumed', from: state.status, to: 'active', actor: c.by.name },
        ),
      },
    },
  ];
}

const fmt = (b: Budgets): string => `${b.tokens ?? '∞'} tokens, ${b.cents ?? '∞'} ¢`;
