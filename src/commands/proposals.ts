import { DomainError } from '../errors.js';
import type { GoalStatus } from '../events/goals.js';
import type { AgentProposed, ProposalEvent, TaskTreeProposed } from '../events/proposals.js';
import type { Decider } from '../engine/decider.js';
import { type By } from '../events/principals.js';

/**
 * The proposal decider: a proposal is decided once — approved or rejected — and never reopened. A spawn
 * is new work, so like a claim (task-steps.ts) it needs a goal that runs: the goal's status is a fact the
 * caller looks up in the same transaction.
 */
export type ProposeTree = { type: 'ProposeTree'; proposal: TaskTreeProposed['data'] };
export type ProposeAgent = { type: 'ProposeAgent'; proposal: AgentProposed['data']; goalStatus: GoalStatus };
export type DecideProposal =
  | { type: 'ApproveProposal'; by: By; auto: boolean; taskIds: number[]; agentId?: number }
  | { type: 'RejectProposal'; by: By; reason: string };
export type ProposalCommand = ProposeTree | ProposeAgent | DecideProposal;

export type Proposal =
  | { status: 'absent' }
  | { status: 'pending' | 'approved' | 'rejected'; proposalId: number; goalId: number; proposer: By };

function evolve(state: Proposal, event: ProposalEvent): Proposal {
  switch (event.type) {
    case 'TaskTreeProposed':
    case 'AgentProposed':
      return {
        status: 'pending',
        proposalId: event.data.proposalId,
        goalId: event.data.goalId,
        proposer: event.data.proposer,
      };
    case 'ProposalApproved':
      return state.status === 'absent' ? state : { ...state, status: 'approved' };
    case 'ProposalRejected':
      return state.status === 'absent' ? state : { ...state, status: 'rejected' };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: ProposalCommand, state: Proposal): ProposalEvent[] {
  if (command.type === 'ProposeTree' || command.type === 'ProposeAgent') {
    if (state.status !== 'absent')
      throw new DomainError('ErrProposalExists', `proposal ${command.proposal.proposalId} already exists`);
    if (command.type === 'ProposeAgent') mayStartWork(command);
    return command.type === 'ProposeTree'
      ? [{ type: 'TaskTreeProposed', data: command.proposal }]
      : [{ type: 'AgentProposed', data: command.proposal }];
  }
  if (state.status === 'absent') throw new DomainError('ErrProposalNotFound', 'proposal not found');
  if (state.status !== 'pending') {
    throw new DomainError('ErrProposalDecided', `proposal ${state.proposalId} was already ${state.status}`, {
      proposal_id: state.proposalId,
      status: state.status,
    });
  }
  return command.type === 'ApproveProposal'
    ? [
        {
          type: 'ProposalApproved',
          data: {
            proposalId: state.proposalId,
            by: command.by,
            auto: command.auto,
            taskIds: command.taskIds,
            ...(command.agentId !== undefined ? { agentId: command.agentId } : {}),
          },
        },
      ]
    : [{ type: 'ProposalRejected', data: { proposalId: state.proposalId, by: command.by, reason: command.reason } }];
}

/** The same refusals as a claim on a closed or paused goal: no new agents until the owner resumes it. */
function mayStartWork(c: ProposeAgent): void {
  const goalId = c.proposal.goalId;
  if (c.goalStatus === 'completed' || c.goalStatus === 'cancelled') {
    throw new DomainError('ErrGoalClosed', `goal ${goalId} is ${c.goalStatus}: it takes no new agents`, {
      goal_id: goalId,
    });
  }
  if (c.goalStatus === 'paused') {
    throw new DomainError(
      'ErrGoalBudgetExceeded',
      `goal ${goalId} is paused: no new agents are spawned until the owner resumes it`,
      { goal_id: goalId, goal_status: 'paused' },
    );
  }
}

export const proposalDecider: Decider<Proposal, ProposalCommand, ProposalEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
