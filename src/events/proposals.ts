import type { Event } from './event.js';
import type { By, VerifierConfig, HeartbeatConfig } from './tasks.js';

/**
 * Proposals (`proposal-<id>` streams) waiting for the goal's owner: a task tree now, agent spawns with
 * the agents issue. The proposal message in `#approvals` carries the whole tree; approving it
 * materializes every task in the same command.
 */
export interface TreeNode {
  title: string;
  description: string;
  acceptance_criteria?: string;
  billing_code?: string;
  budget_tokens?: number;
  budget_dollars_cents?: number;
  verifier_config?: VerifierConfig;
  heartbeat_config?: HeartbeatConfig;
  children?: TreeNode[];
}

export type TaskTreeProposed = Event<'TaskTreeProposed', {
  proposalId: number;
  goalId: number;
  ownerId: number;
  proposer: By;
  reasoning: string;
  tree: TreeNode;
  taskCount: number;
  messageId: number;
  channelId: number;
}>;

export type ProposalApproved = Event<'ProposalApproved', { proposalId: number; by: By; auto: boolean; taskIds: number[] }>;
export type ProposalRejected = Event<'ProposalRejected', { proposalId: number; by: By; reason: string }>;

export type ProposalEvent = TaskTreeProposed | ProposalApproved | ProposalRejected;
export const proposalStream = (proposalId: number): string => `proposal-${proposalId}`;
