import { DomainError } from '../errors.js';
import type { GoalStatus } from '../events/goals.js';
import type { AgentProposed, AgentSpec, ProposalEvent } from '../events/proposals.js';
import type { Decider } from '../engine/decider.js';
import { type By, isOwner } from '../events/principals.js';
import { checkSpawn, type SpawnFacts } from './proposal-spawn.js';
import { proposeTree, type ProposeTree } from './proposal-tree.js';

/**
 * The proposal decider: a proposal is made (a task tree: proposal-tree.ts; a spawn: proposal-spawn.ts),
 * then decided once — approved or rejected — by the goal's owner (or by `system` at once, when the goal
 * approves automatically), and never reopened. A spawn is new work, so like a claim it needs a goal that
 * runs: the goal's status is a fact looked up in the same transaction, as are the other streams' facts
 * each decision takes.
 */
export type { ProposeTree, TreeFacts, RecipeFact, PeerFact } from './proposal-tree.js';
export type { SpawnFacts, ParentGrant } from './proposal-spawn.js';

/** `spawn`: the facts the caps and the name are checked against; `spawn.parent` null when no agent proposes. */
export type ProposeAgent = {
  type: 'ProposeAgent';
  proposal: AgentProposed['data'];
  goalStatus: GoalStatus;
  spawn: SpawnFacts;
};
/** A recorded command verifier whose recipe was removed or changed since the tree was proposed (a fact). */
export interface StaleRecipe {
  path: string;
  problem: string;
}
/**
 * `by` decides; `auto`: `system` approves for a goal in auto mode. A tree's approval names the ids of the
 * tasks it creates and the recipes gone stale since; an agent's approval names the new agent's id and the
 * facts its caps are checked against again.
 */
export type ApproveProposal = {
  type: 'ApproveProposal';
  by: By;
  auto: boolean;
  taskIds: number[];
  staleRecipes?: readonly StaleRecipe[];
  agentId?: number;
  spawn?: SpawnFacts;
};
/** `withdrawn`: Colony rejecting it because its goal was closed (nothing is left to decide). */
export type RejectProposal = { type: 'RejectProposal'; by: By; reason: string; withdrawn?: boolean };
export type DecideProposal = ApproveProposal | RejectProposal;
export type ProposalCommand = ProposeTree | ProposeAgent | DecideProposal;

export type Proposal =
  | { status: 'absent' }
  | {
      status: 'pending' | 'approved' | 'rejected';
      proposalId: number;
      goalId: number;
      ownerId: number;
      proposer: By;
      /** The agent a spawn proposal would create (null for a task tree). */
      agent: AgentSpec | null;
    };
type Made = Exclude<Proposal, { status: 'absent' }>;

function evolve(state: Proposal, event: ProposalEvent): Proposal {
  switch (event.type) {
    case 'TaskTreeProposed':
    case 'AgentProposed': {
      const d = event.data;
      const agent = event.type === 'AgentProposed' ? event.data.agent : null;
      return {
        status: 'pending',
        proposalId: d.proposalId,
        goalId: d.goalId,
        ownerId: d.ownerId,
        proposer: d.proposer,
        agent,
      };
    }
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
    if (command.type === 'ProposeTree') return [proposeTree(command)];
    mayProposeAgent(command);
    return [{ type: 'AgentProposed', data: command.proposal }];
  }
  if (state.status === 'absent') throw new DomainError('ErrProposalNotFound', 'proposal not found');
  mayDecide(state, command);
  if (command.type === 'RejectProposal')
    return [
      { type: 'ProposalRejected', data: { proposalId: state.proposalId, by: command.by, reason: command.reason } },
    ];
  if (state.agent) mayCreateAgent(state, state.agent, command);
  else mayCreateTasks(command);
  return [
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
  ];
}

/** Only agents propose agents, within their caps; a closed or paused goal takes no new agents until the owner resumes it. */
function mayProposeAgent(c: ProposeAgent): void {
  if (!c.spawn.parent)
    throw new DomainError('ErrForbidden', 'only agents propose agents; owners create them with `colony agents create`');
  checkSpawn(c.spawn.parent, c.proposal.agent, c.spawn, c.proposal.goalId);
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

/**
 * The goal's owner decides (or `system`, approving for a goal in auto mode, or withdrawing the proposals
 * of a goal that was closed); a decided proposal stays
 * decided. Both are said before any of the decision's work counts: approving a spawn again would
 * otherwise fail on its name (ErrAgentNameTaken).
 */
function mayDecide(state: Made, c: DecideProposal): void {
  const auto = c.type === 'ApproveProposal' && c.auto && c.by.key === 'system';
  const withdrawn = c.type === 'RejectProposal' && c.withdrawn === true && c.by.key === 'system';
  if (!isOwner(c.by, state.ownerId) && !auto && !withdrawn)
    throw new DomainError('ErrForbidden', "only the goal's owner decides its proposals", {
      proposal_id: state.proposalId,
    });
  if (state.status !== 'pending') {
    throw new DomainError('ErrProposalDecided', `proposal ${state.proposalId} was already ${state.status}`, {
      proposal_id: state.proposalId,
      status: state.status,
    });
  }
}

/** The spawn's caps and name again: the parent's grant or the team may have changed since the proposal. */
function mayCreateAgent(state: Made, spec: AgentSpec, c: ApproveProposal): void {
  // A caller that forgot the facts must not skip the caps: that is a bug, never an approval.
  if (!c.spawn || c.agentId === undefined) throw new Error('approving an agent proposal needs its spawn facts and id');
  if (!c.spawn.parent)
    throw new DomainError('ErrNotFound', `the proposing agent ${state.proposer.name} no longer exists`);
  checkSpawn(c.spawn.parent, spec, c.spawn, state.goalId);
}

/** Every command verifier's recipe must still be the one the card showed. */
function mayCreateTasks(c: ApproveProposal): void {
  if (!c.staleRecipes) throw new Error('approving a task tree needs its stale recipes looked up');
  const stale = c.staleRecipes[0];
  if (stale) {
    throw new DomainError(
      'ErrVerifierNotFound',
      `${stale.path}: ${stale.problem} — reject this proposal and propose the tree again`,
      { path: stale.path },
    );
  }
}

export const proposalDecider: Decider<Proposal, ProposalCommand, ProposalEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
