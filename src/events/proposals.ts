import type { Event } from '../engine/event.js';
import type { Tier } from './principals.js';
import type { VerifierConfig, HeartbeatConfig } from './tasks.js';
import { type AgentMcpServer } from './agent-config.js';
import { type By } from './principals.js';

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
  /** Tasks of the goal (from earlier trees) this node's task waits on. */
  blocked_by?: number[];
  /** Other nodes of this tree it waits on, by path (`tree.children[0]`); their ids once approved. */
  blocked_by_nodes?: string[];
  children?: TreeNode[];
}

/**
 * A tree as an agent or owner proposes it: a command verifier names an owner-registered recipe (and may
 * give a working directory when the recipe has none); the proposal records the recipe's exact command.
 */
export type VerifierRequest =
  { kind: 'auto' } | { kind: 'peer'; agent_id: number } | { kind: 'command'; recipe: string; cwd?: string };
export interface TreeRequest extends Omit<TreeNode, 'verifier_config' | 'children'> {
  verifier_config?: VerifierRequest;
  children?: TreeRequest[];
}

export type TaskTreeProposed = Event<
  'TaskTreeProposed',
  {
    proposalId: number;
    goalId: number;
    ownerId: number;
    proposer: By;
    reasoning: string;
    tree: TreeNode;
    taskCount: number;
    messageId: number;
    channelId: number;
  }
>;

/** A spawn proposal (propose_agent): the caps were checked when it was made and are checked again on approval. */
export interface AgentSpec {
  name: string;
  model: string;
  systemPrompt: string;
  toolScope: string[];
  skills: string[];
  mcpServers: AgentMcpServer[];
  subagents: string[];
  tier: Tier;
}
export type AgentProposed = Event<
  'AgentProposed',
  {
    proposalId: number;
    goalId: number;
    ownerId: number;
    parentTaskId: number;
    /** The proposer is the parent of the agent to be. */
    proposer: By & { agentId: number };
    agent: AgentSpec;
    reason: string;
    messageId: number;
    channelId: number;
  }
>;

export type ProposalApproved = Event<
  'ProposalApproved',
  {
    proposalId: number;
    by: By;
    auto: boolean;
    taskIds: number[];
    /** The agent an agent proposal created (absent for task trees). */
    agentId?: number;
  }
>;
export type ProposalRejected = Event<'ProposalRejected', { proposalId: number; by: By; reason: string }>;

export type ProposalEvent = TaskTreeProposed | AgentProposed | ProposalApproved | ProposalRejected;
export const proposalStream = (proposalId: number): string => `proposal-${proposalId}`;
