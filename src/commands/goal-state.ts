import { isOwner } from '../events/principals.js';
import { DomainError } from '../errors.js';
import type { ApprovalMode, BudgetDimension, Budgets, GoalEvent, GoalStatus } from '../events/goals.js';
import type { Notice } from '../events/notices.js';
import type { DecideContext } from '../engine/decider.js';

/**
 * The goal's state as its decider folds it, the legal status moves, and the notice every goal event
 * carries to the goal's channel. Transitions follow SynapBus's implementation:
 *   draft → active | completed | stuck | cancelled;  active → paused | completed | stuck | cancelled;
 *   paused → active | completed | stuck | cancelled; stuck → active | completed | cancelled.
 */
export type Goal =
  | { status: 'absent' }
  | {
      status: GoalStatus;
      goalId: number;
      ownerId: number;
      /** The goal's coordinator, who may propose its task tree and close it besides the owner. */
      coordinatorAgentId: number;
      title: string;
      channelId: number;
      budgets: Budgets;
      alerted: Record<BudgetDimension, boolean>;
      approvalMode: ApprovalMode;
      /** Done only with evidence (goal-evidence.ts); off, with no retries, for goals created before the rule. */
      requireEvidence: boolean;
      maxRejections: number;
    };
export type Live = Exclude<Goal, { status: 'absent' }>;

const LEGAL: Record<GoalStatus, readonly GoalStatus[]> = {
  draft: ['active', 'completed', 'stuck', 'cancelled'],
  active: ['paused', 'completed', 'stuck', 'cancelled'],
  paused: ['active', 'completed', 'stuck', 'cancelled'],
  stuck: ['active', 'completed', 'cancelled'],
  completed: [],
  cancelled: [],
};
export const goalCanMove = (from: GoalStatus, to: GoalStatus): boolean => LEGAL[from].includes(to);

export const illegal = (from: string, to: string): DomainError =>
  new DomainError('ErrIllegalTransition', `illegal goal transition: ${from} → ${to}`, { from, to });

/** Whether the principal `key` (`user-N`, `agent-N`, `system`) is the owner of the goal. */
export const isGoalOwner = (state: Live, key: string): boolean => isOwner({ key }, state.ownerId);
/** Whether the principal `key` is the goal's coordinator agent. */
export const isCoordinator = (state: Live, key: string): boolean => key === `agent-${state.coordinatorAgentId}`;

export function evolve(state: Goal, event: GoalEvent): Goal {
  if (event.type === 'GoalCreated') {
    const g = event.data;
    return {
      status: 'draft',
      goalId: g.goalId,
      ownerId: g.ownerId,
      coordinatorAgentId: g.coordinatorAgentId,
      title: g.title,
      channelId: g.channelId,
      budgets: g.budgets,
      alerted: { tokens: false, cents: false },
      approvalMode: g.approvalMode,
      requireEvidence: g.requireEvidence ?? false,
      maxRejections: g.maxRejections ?? 0,
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
    case 'GoalEvidenceRuleSet':
      return { ...state, ...event.data.to };
    default: {
      const never: never = event;
      return never;
    }
  }
}

/** The system message a goal event posts to the goal's channel. */
export function notice(state: Live, ctx: DecideContext, body: string, metadata: Record<string, unknown>): Notice {
  return {
    messageId: ctx.ids.next('message'),
    channelId: state.channelId,
    body,
    metadata: { kind: 'system', goal_id: state.goalId, ...metadata },
  };
}
