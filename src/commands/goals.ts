import { DomainError } from '../errors.js';
import type {
  ApprovalMode,
  BudgetDimension,
  Budgets,
  ClosingStatus,
  GoalCreated,
  GoalEvent,
  GoalStatus,
} from '../events/goals.js';
import type { Notice } from '../events/notices.js';
import type { Decider, DecideContext } from '../engine/decider.js';

/**
 * The goal decider. Transitions follow SynapBus's implementation (DESIGN §3.4):
 *   draft → active | completed | stuck | cancelled;  active → paused | completed | stuck | cancelled;
 *   paused → active | completed | stuck | cancelled; stuck → active | completed | cancelled.
 * Budget decisions (§3.7) take the goal's current spend as a fact looked up in the same transaction.
 */
export interface Spend {
  tokens: number;
  cents: number;
}
export interface Who {
  key: string;
  name: string;
}

export type CreateGoal = { type: 'CreateGoal'; goal: GoalCreated['data'] };
export type ActivateGoal = { type: 'ActivateGoal'; proposalId: number | null; by: Who };
/** After spend changed: raise the 80 % alert once, pause at 100 %. */
export type ApplySpend = { type: 'ApplySpend'; spent: Spend };
/** Work was refused for budget: the goal pauses (if it still runs). */
export type PauseForBudget = {
  type: 'PauseForBudget';
  dimension: BudgetDimension;
  spent: number;
  requested: number;
  by: Who;
};
export type ResumeGoal = { type: 'ResumeGoal'; budgets: Partial<Budgets>; spent: Spend; by: Who };
export type CloseGoal = { type: 'CloseGoal'; to: ClosingStatus; summary: string; by: Who };
export type SetApprovalMode = { type: 'SetApprovalMode'; to: ApprovalMode; by: Who };
export type GoalCommand =
  CreateGoal | ActivateGoal | ApplySpend | PauseForBudget | ResumeGoal | CloseGoal | SetApprovalMode;

export type Goal =
  | { status: 'absent' }
  | {
      status: GoalStatus;
      goalId: number;
      ownerId: number;
      title: string;
      channelId: number;
      budgets: Budgets;
      alerted: Record<BudgetDimension, boolean>;
      approvalMode: ApprovalMode;
    };
type Live = Exclude<Goal, { status: 'absent' }>;

const LEGAL: Record<GoalStatus, readonly GoalStatus[]> = {
  draft: ['active', 'completed', 'stuck', 'cancelled'],
  active: ['paused', 'completed', 'stuck', 'cancelled'],
  paused: ['active', 'completed', 'stuck', 'cancelled'],
  stuck: ['active', 'completed', 'cancelled'],
  completed: [],
  cancelled: [],
};
export const goalCanMove = (from: GoalStatus, to: GoalStatus): boolean => LEGAL[from].includes(to);
const DIMENSIONS: readonly BudgetDimension[] = ['tokens', 'cents'];
const UNIT: Record<BudgetDimension, string> = { tokens: 'tokens', cents: '¢' };

function evolve(state: Goal, event: GoalEvent): Goal {
  if (event.type === 'GoalCreated') {
    const g = event.data;
    return {
      status: 'draft',
      goalId: g.goalId,
      ownerId: g.ownerId,
      title: g.title,
      channelId: g.channelId,
      budgets: g.budgets,
      alerted: { tokens: false, cents: false },
      approvalMode: g.approvalMode,
    };
  }
  if (state.status === 'absent') return state;
  switch (event.type) {
    case 'GoalActivated':
      return { ...state, status: 'active' };
    case 'GoalPaused':
      return { ...state, status: 'paused' };
    case 'GoalResumed': {
      const { rearm } = event.data;
      return {
        ...state,
        status: 'active',
        budgets: event.data.budgets,
        alerted: { tokens: state.alerted.tokens && !rearm.tokens, cents: state.alerted.cents && !rearm.cents },
      };
    }
    case 'GoalClosed':
      return { ...state, status: event.data.to };
    case 'BudgetAlertRaised':
      return { ...state, alerted: { ...state.alerted, [event.data.dimension]: true } };
    case 'GoalApprovalModeSet':
      return { ...state, approvalMode: event.data.to };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: GoalCommand, state: Goal, ctx: DecideContext): GoalEvent[] {
  if (command.type === 'CreateGoal') {
    if (state.status !== 'absent') throw new DomainError('ErrGoalExists', `goal ${command.goal.goalId} already exists`);
    return [{ type: 'GoalCreated', data: command.goal }];
  }
  if (state.status === 'absent') throw new DomainError('ErrGoalNotFound', 'goal not found');
  switch (command.type) {
    case 'ActivateGoal':
      if (state.status !== 'draft') return [];
      return [
        {
          type: 'GoalActivated',
          data: {
            goalId: state.goalId,
            from: 'draft',
            proposalId: command.proposalId,
            notice: notice(
              state,
              ctx,
              `Goal "${state.title}": draft → active (task tree approved by ${command.by.name})`,
              { event: 'GoalActivated', from: 'draft', to: 'active', actor: command.by.name },
            ),
          },
        },
      ];
    case 'ApplySpend':
      return applySpend(state, command.spent, ctx);
    case 'PauseForBudget': {
      if (state.status !== 'active') return [];
      const budget = state.budgets[command.dimension]!;
      const body = `Goal "${state.title}": active → paused — budget exhausted: ${command.spent} + ${command.requested} ${UNIT[command.dimension]} requested > ${budget} (refused work of ${command.by.name})`;
      return [
        {
          type: 'GoalPaused',
          data: {
            goalId: state.goalId,
            from: 'active',
            reason: 'budget',
            dimension: command.dimension,
            spent: command.spent,
            requested: command.requested,
            budget,
            notice: notice(state, ctx, body, {
              event: 'GoalPaused',
              from: 'active',
              to: 'paused',
              dimension: command.dimension,
              actor: command.by.name,
            }),
          },
        },
      ];
    }
    case 'ResumeGoal':
      return resume(state, command, ctx);
    case 'CloseGoal': {
      if (state.status === command.to) return [];
      if (!goalCanMove(state.status, command.to)) throw illegal(state.status, command.to);
      return [
        {
          type: 'GoalClosed',
          data: {
            goalId: state.goalId,
            from: state.status,
            to: command.to,
            summary: command.summary,
            by: command.by.name,
            notice: notice(
              state,
              ctx,
              `Goal "${state.title}": ${state.status} → ${command.to} by ${command.by.name}: ${command.summary}`,
              { event: 'GoalClosed', from: state.status, to: command.to, actor: command.by.name },
            ),
          },
        },
      ];
    }
    case 'SetApprovalMode': {
      if (state.approvalMode === command.to) return [];
      if (state.status === 'completed' || state.status === 'cancelled')
        throw new DomainError('ErrGoalClosed', `goal ${state.goalId} is ${state.status}`, { goal_id: state.goalId });
      const body = `Goal "${state.title}": approvals are now ${command.to === 'auto' ? 'automatic (proposals using only registered commands are approved at once)' : 'by the owner'} — set by ${command.by.name}`;
      return [
        {
          type: 'GoalApprovalModeSet',
          data: {
            goalId: state.goalId,
            from: state.approvalMode,
            to: command.to,
            by: command.by.name,
            notice: notice(state, ctx, body, {
              event: 'GoalApprovalModeSet',
              from: state.approvalMode,
              to: command.to,
              actor: command.by.name,
            }),
          },
        },
      ];
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}

function applySpend(state: Live, spent: Spend, ctx: DecideContext): GoalEvent[] {
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

function resume(state: Live, c: ResumeGoal, ctx: DecideContext): GoalEvent[] {
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

function notice(state: Live, ctx: DecideContext, body: string, metadata: Record<string, unknown>): Notice {
  return {
    messageId: ctx.ids.next('message'),
    channelId: state.channelId,
    body,
    metadata: { kind: 'system', goal_id: state.goalId, ...metadata },
  };
}

export const illegal = (from: string, to: string): DomainError =>
  new DomainError('ErrIllegalTransition', `illegal goal transition: ${from} → ${to}`, { from, to });

export const goalDecider: Decider<Goal, GoalCommand, GoalEvent> = {
  snapshot: { name: 'goal', version: 1 },
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
