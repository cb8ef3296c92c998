import type { Database } from 'better-sqlite3';
import { commandsOf } from '../../commands/proposal-card.js';
import type { AgentSpec, TreeNode } from '../../events/proposals.js';
import { getGoal } from '../../projections/goal-queries.js';
import { getAgent } from '../../projections/principal-queries.js';
import type { ProposalRow } from '../../projections/proposal-queries.js';

/**
 * What every owner surface shows for a proposal — the command list approving it lets run, the view the
 * console and `colony proposals` list, the text a decision answers with. The `#approvals` card itself
 * and the tree's outline are pure (commands/proposal-card.ts).
 */
export { commandsOf, treeOutline, verifierLabel } from '../../commands/proposal-card.js';

/**
 * Every command line approving a proposal lets run on the host — one list for `colony approve`,
 * `colony proposals show`, the console and the owner's approve reaction: a tree's verifier recipes, or
 * the backend a spawned agent inherits from its proposer.
 */
export function proposalCommands(db: Database, p: ProposalRow): string[] {
  if (p.kind === 'task_tree') return commandsOf(p.tree as TreeNode);
  const backend = p.proposerKey.startsWith('agent-')
    ? (getAgent(db, Number(p.proposerKey.slice('agent-'.length)))?.command ?? null)
    : null;
  return backend ? [backend] : [];
}

/** A proposal as the owner's surfaces show it (the console's `GET /api/proposals`, `colony proposals --json`). */
export function proposalView(db: Database, p: ProposalRow) {
  const base = {
    id: p.proposalId,
    kind: p.kind === 'task_tree' ? ('tree' as const) : ('agent' as const),
    goal_id: p.goalId,
    goal_title: getGoal(db, p.goalId)?.title ?? '',
    proposer: p.proposerName,
    created_at: p.createdAt,
    status: p.status,
    task_count: p.taskCount,
    reasoning: p.reasoning,
    decided_by: p.decidedBy,
    decided_at: p.decidedAt,
    reason: p.reason,
  };
  if (p.kind === 'task_tree') return { ...base, tree: p.tree as TreeNode, commands: proposalCommands(db, p) };
  const spec = p.tree as AgentSpec;
  return {
    ...base,
    agent: {
      name: spec.name,
      model: spec.model,
      tier: spec.tier,
      tool_scope: spec.toolScope,
      system_prompt: spec.systemPrompt,
      reason: p.reasoning,
      parent_task_id: p.parentTaskId,
    },
    commands: proposalCommands(db, p),
  };
}

/** A decision as `colony approve|reject --json` and the owner's approve / reject reaction answer it. */
export function decisionView(db: Database, p: ProposalRow, taskIds: readonly number[]) {
  const commands = p.status === 'approved' ? proposalCommands(db, p) : [];
  return {
    proposal_id: p.proposalId,
    status: p.status,
    task_ids: [...taskIds],
    ...(p.kind === 'agent' ? { agent_id: p.agentId } : {}),
    commands,
    summary: decisionText(p, taskIds, commands),
  };
}

/** What a decision did, as `colony approve|reject` prints it and the owner's reaction answers. */
export function decisionText(p: ProposalRow, taskIds: readonly number[], commands: readonly string[]): string {
  if (p.status === 'rejected') return `Rejected proposal ${p.proposalId}; the proposer was told why`;
  const created =
    p.kind === 'agent'
      ? `created agent ${(p.tree as AgentSpec).name} (id ${p.agentId})`
      : `created tasks ${taskIds.join(', ')}`;
  const whose = p.kind === 'agent' ? 'the backend it inherits from its proposer' : 'your verifier recipes';
  const runs = commands.length
    ? `\nCommands it runs on this host (${whose}):\n${commands.map((c) => `  ${c}`).join('\n')}`
    : '';
  return `Approved proposal ${p.proposalId}: ${created}${runs}`;
}
