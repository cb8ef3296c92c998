import type { Database } from 'better-sqlite3';
import { senderKind } from '../../events/channels.js';
import type { AgentSpec, TreeNode } from '../../events/proposals.js';
import { getGoal } from '../../projections/goal-queries.js';
import type { ProposalRow } from '../../projections/proposal-queries.js';
import { proposalCommands, treeOutline } from './card.js';

/**
 * What the approval card (an MCP App, src/mcp/apps) shows for one proposal, as review_proposal returns it
 * in structuredContent: every command line approving it lets run on the host (the same list `colony
 * approve`, the console and the `#approvals` message show — actions/proposals/card.ts), the goal, the proposer,
 * its reasoning, the tree as the outline every owner surface uses — or, for a spawn proposal, the agent
 * to be — and the `#approvals` message the owner's approve / reject reaction goes on. Most of it is
 * agent-written: the card renders it as text, never as markup.
 */
export interface ApprovalCard {
  proposal_id: number;
  kind: 'tree' | 'agent';
  status: ProposalRow['status'];
  goal_id: number;
  goal_title: string;
  goal_description: string;
  proposer: string;
  proposer_kind: 'user' | 'agent' | 'system';
  reasoning: string;
  /** The `#approvals` message to react approve / reject on (the react tool). */
  message_id: number;
  commands: string[];
  task_count: number;
  tree_outline: string[];
  agent: AgentCard | null;
  created_at: string;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
}

export interface AgentCard {
  name: string;
  model: string;
  tier: string;
  tool_scope: string[];
  skills: string[];
  subagents: string[];
  mcp_servers: { name: string; url: string; transport: string }[];
  system_prompt: string;
  parent_task_id: number | null;
}

export function approvalCardOf(db: Database, p: ProposalRow): ApprovalCard {
  const goal = getGoal(db, p.goalId);
  return {
    proposal_id: p.proposalId,
    kind: p.kind === 'task_tree' ? 'tree' : 'agent',
    status: p.status,
    goal_id: p.goalId,
    goal_title: goal?.title ?? '',
    goal_description: goal?.description ?? '',
    proposer: p.proposerName,
    proposer_kind: senderKind(p.proposerKey),
    reasoning: p.reasoning,
    message_id: p.messageId,
    commands: proposalCommands(db, p),
    task_count: p.taskCount,
    tree_outline: p.kind === 'task_tree' ? treeOutline(p.tree as TreeNode) : [],
    agent: p.kind === 'agent' ? agentCard(p.tree as AgentSpec, p.parentTaskId) : null,
    created_at: p.createdAt,
    decided_by: p.decidedBy,
    decided_at: p.decidedAt,
    reason: p.reason,
  };
}

// MCP servers are shown with their URLs: they are where the new agent will connect, which the owner approves too.
const agentCard = (s: AgentSpec, parentTaskId: number | null): AgentCard => ({
  name: s.name,
  model: s.model,
  tier: s.tier,
  tool_scope: [...s.toolScope],
  skills: [...s.skills],
  subagents: [...s.subagents],
  mcp_servers: s.mcpServers.map((m) => ({ name: m.name, url: m.url, transport: m.transport })),
  system_prompt: s.systemPrompt,
  parent_task_id: parentTaskId,
});

/** The card as text, for the model and for clients that do not render MCP Apps: the commands first, as everywhere. */
export function approvalCardText(c: ApprovalCard): string {
  const what = c.kind === 'tree' ? `task tree (${c.task_count} tasks)` : `agent ${c.agent?.name ?? '?'}`;
  const head =
    `Proposal #${c.proposal_id}, ${what}, for goal #${c.goal_id} "${c.goal_title}" by ${c.proposer}: ${c.status}` +
    (c.decided_by ? ` by ${c.decided_by}${c.reason ? ` (${c.reason})` : ''}` : '') +
    '.';
  const run = c.commands.length
    ? ['Commands it runs on this host:', ...c.commands.map((x) => `  * ${x}`)]
    : ['It runs no command on this host.'];
  const how =
    c.status === 'pending'
      ? `The owner decides it on the card, or with react on message ${c.message_id}: reaction approve, or reject with metadata {"reason": "…"}.`
      : 'It is decided: the card shows the outcome.';
  return [head, ...run, ...c.tree_outline, how].join('\n');
}
