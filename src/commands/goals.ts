import { DomainError } from '../errors.js';
import type { ApprovalMode, ClosingStatus, GoalCreated, GoalEvent } from '../events/goals.js';
import { type By, isOwner } from '../events/principals.js';
import type { Decider, DecideContext } from '../engine/decider.js';
import {
  applySpend,
  pauseForBudget,
  resume,
  type ApplySpend,
  type PauseForBudget,
  type ResumeGoal,
} from './goal-budget.js';
import {
  evolve,
  goalCanMove,
  illegal,
  isCoordinator,
  isGoalOwner,
  notice,
  type Goal,
  type Live,
} from './goal-state.js';
import { mustBeVerified, setEvidenceRule, type SetEvidenceRule, type UnverifiedLeaves } from './goal-evidence.js';

/**
 * The goal decider: creation, activation by an approved tree, closing, the approval mode and the budget
 * decisions (goal-budget.ts). Who may do what is decided here from `by`, the principal who asks: the
 * owner does everything; the goal's coordinator may also close it; only the owner turns on automatic
 * approval, resumes the goal, switches its approval mode or sets its evidence rule (goal-evidence.ts).
 */
export type { Spend, ApplySpend, PauseForBudget, ResumeGoal } from './goal-budget.js';
export type { SetEvidenceRule, UnverifiedLeaves } from './goal-evidence.js';
export { goalCanMove, illegal, type Goal } from './goal-state.js';
export type Who = By;

/** `by`: who creates it — an agent (which a prompt injection may drive) never creates a goal in auto mode. */
export type CreateGoal = { type: 'CreateGoal'; goal: GoalCreated['data']; by: By };
export type ActivateGoal = { type: 'ActivateGoal'; proposalId: number | null; by: By };
/** `unverified`: fact for a goal that requires evidence — its leaves not done by a verdict that counts. */
export type CloseGoal = {
  type: 'CloseGoal';
  to: ClosingStatus;
  summary: string;
  by: By;
  unverified?: UnverifiedLeaves;
};
export type SetApprovalMode = { type: 'SetApprovalMode'; to: ApprovalMode; by: By };
export type GoalCommand =
  CreateGoal | ActivateGoal | ApplySpend | PauseForBudget | ResumeGoal | CloseGoal | SetApprovalMode | SetEvidenceRule;

function decide(command: GoalCommand, state: Goal, ctx: DecideContext): GoalEvent[] {
  if (command.type === 'CreateGoal') return create(command, state);
  if (state.status === 'absent') throw new DomainError('ErrGoalNotFound', 'goal not found');
  switch (command.type) {
    case 'ActivateGoal':
      return activate(state, command, ctx);
    case 'ApplySpend':
      return applySpend(state, command.spent, ctx);
    case 'PauseForBudget':
      return pauseForBudget(state, command, ctx);
    case 'ResumeGoal':
      return resume(state, command, ctx);
    case 'CloseGoal':
      return close(state, command, ctx);
    case 'SetApprovalMode':
      return setApprovalMode(state, command, ctx);
    case 'SetEvidenceRule':
      return setEvidenceRule(state, command, ctx);
    default: {
      const never: never = command;
      return never;
    }
  }
}

/**
 * Auto-approval is the owner's choice: an agent never turns it on, or it would approve its own
 * proposals. It covers only registered commands (verifier recipes). Turning evidence off is the owner's too.
 */
function create(c: CreateGoal, state: Goal): GoalEvent[] {
  if (c.goal.approvalMode === 'auto' && !isOwner(c.by, c.goal.ownerId)) {
    throw new DomainError(
      'ErrApprovalModeForbidden',
      'approval_mode "auto" is the owner\'s choice: create the goal in "human" mode; the owner may switch it (set_goal_approval_mode, `colony goals mode ID auto`)',
      { approval_mode: c.goal.approvalMode },
    );
  }
  // Done only with evidence is the owner's rule too: an agent never creates a goal that lets work pass unverified.
  if (c.goal.requireEvidence === false && !isOwner(c.by, c.goal.ownerId))
    throw new DomainError(
      'ErrForbidden',
      "require_evidence false is the owner's choice: create the goal with it on; the owner may turn it off (set_goal_evidence, `colony goals evidence ID off`)",
      { field: 'require_evidence' },
    );
  if (state.status !== 'absent') throw new DomainError('ErrGoalExists', `goal ${c.goal.goalId} already exists`);
  return [{ type: 'GoalCreated', data: c.goal }];
}

/** An approved tree activates a draft goal; on any other goal it changes nothing. */
function activate(state: Live, c: ActivateGoal, ctx: DecideContext): GoalEvent[] {
  if (state.status !== 'draft') return [];
  return [
    {
      type: 'GoalActivated',
      data: {
        goalId: state.goalId,
        from: 'draft',
        proposalId: c.proposalId,
        notice: notice(state, ctx, `Goal "${state.title}": draft → active (task tree approved by ${c.by.name})`, {
          event: 'GoalActivated',
          from: 'draft',
          to: 'active',
          actor: c.by.name,
        }),
      },
    },
  ];
}

/** The owner or the goal's coordinator closes it as completed, stuck or cancelled; the same status again is a no-op. */
function close(state: Live, c: CloseGoal, ctx: DecideContext): GoalEvent[] {
  if (!isGoalOwner(state, c.by.key) && !isCoordinator(state, c.by.key)) {
    throw new DomainError(
      'ErrForbidden',
      `only the goal's owner or its coordinator may complete goal ${state.goalId}`,
      {
        goal_id: state.goalId,
      },
    );
  }
  if (state.status === c.to) return [];
  if (!goalCanMove(state.status, c.to)) throw illegal(state.status, c.to);
  mustBeVerified(state, c.to, c.unverified);
  return [
    {
      type: 'GoalClosed',
      data: {
        goalId: state.goalId,
        from: state.status,
        to: c.to,
        summary: c.summary,
        by: c.by.name,
        notice: notice(state, ctx, `Goal "${state.title}": ${state.status} → ${c.to} by ${c.by.name}: ${c.summary}`, {
          event: 'GoalClosed',
          from: state.status,
          to: c.to,
          actor: c.by.name,
        }),
      },
    },
  ];
}

/** Only the owner switches a goal between human and automatic approval; a closed goal keeps its mode. */
function setApprovalMode(state: Live, c: SetApprovalMode, ctx: DecideContext): GoalEvent[] {
  if (!isGoalOwner(state, c.by.key))
    throw new DomainError('ErrApprovalModeForbidden', "only the goal's owner sets its approval mode");
  if (state.approvalMode === c.to) return [];
  if (state.status === 'completed' || state.status === 'cancelled')
    throw new DomainError('ErrGoalClosed', `goal ${state.goalId} is ${state.status}`, { goal_id: state.goalId });
  const body = `Goal "${state.title}": approvals are now ${c.to === 'auto' ? 'automatic (proposals using only registered commands are approved at once)' : 'by the owner'} — set by ${c.by.name}`;
  return [
    {
      type: 'GoalApprovalModeSet',
      data: {
        goalId: state.goalId,
        from: state.approvalMode,
        to: c.to,
        by: c.by.name,
        notice: notice(state, ctx, body, {
          event: 'GoalApprovalModeSet',
          from: state.approvalMode,
          to: c.to,
          actor: c.by.name,
        }),
      },
    },
  ];
}

export const goalDecider: Decider<Goal, GoalCommand, GoalEvent> = {
  // Version 3: the state holds the goal's evidence rule (2: its coordinator).
  snapshot: { name: 'goal', version: 3 },
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
