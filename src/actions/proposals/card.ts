import { MAX_BODY } from '../../commands/channels.js';
import { DomainError } from '../../errors.js';
import type { Database } from 'better-sqlite3';
import type { AgentSpec, TreeNode } from '../../events/proposals.js';
import { getGoal, type GoalRow } from '../../projections/goal-queries.js';
import { getAgent } from '../../projections/principals.js';
import type { ProposalRow } from '../../projections/proposal-queries.js';

/**
 * The approval card of a task-tree proposal in `#approvals`: the tree as far as it fits, and first,
 * always in full, every command line it would run on the host — recipe, `sh -c "…"`, directory,
 * timeout, granted secrets — so the owner approves exactly what runs (DESIGN §8). Also the outline and
 * command list every owner surface shows for a proposal, and the text a decision answers with.
 */
export function renderProposal(
  goal: GoalRow,
  proposalId: number,
  proposer: string,
  reasoning: string,
  tree: TreeNode,
  count: number,
): string {
  const lines = treeOutline(tree);
  const commands = commandsOf(tree);
  const head = `Task tree proposal #${proposalId} for goal #${goal.goalId} "${goal.title}" by ${proposer} (${count} tasks).`;
  const why = reasoning ? `Reasoning: ${clip(reasoning, 4000)}` : '';
  // Every command line this tree would run, in full and first: the owner must see exactly what runs on the host, however big the tree.
  const run = commands.length
    ? [
        'Commands it will run on the host (your verifier recipes, exactly as they run):',
        ...commands.map((c) => `  * ${c}`),
      ].join('\n')
    : '';
  const foot = 'React approve or reject (metadata {"reason": "…"}).';
  // A message body holds at most MAX_BODY characters; a big tree is listed as far as it fits (all of it is in the metadata).
  let room = MAX_BODY - head.length - why.length - run.length - foot.length - 200;
  if (room < 0)
    throw new DomainError(
      'ErrInvalidInput',
      "the tree's verifier commands are too long to show in full on one approval card: use fewer recipes in one tree",
      { field: 'tree' },
    );
  const shown: string[] = [];
  for (const line of lines) {
    if (line.length + 1 > room) {
      shown.push(`… and ${lines.length - shown.length} more tasks (the whole tree is in this message's metadata)`);
      break;
    }
    shown.push(line);
    room -= line.length + 1;
  }
  return [head, why, run, ...shown, foot].filter(Boolean).join('\n');
}

/** The tree as an indented outline, one line per task: title, budgets, verifier (a command's in full is in commandsOf). */
export function treeOutline(tree: TreeNode): string[] {
  const lines: string[] = [];
  const walk = (n: TreeNode, depth: number): void => {
    const budget = [
      n.budget_tokens !== undefined ? `${n.budget_tokens} tokens` : '',
      n.budget_dollars_cents !== undefined ? `${n.budget_dollars_cents}¢` : '',
    ]
      .filter(Boolean)
      .join(', ');
    const v = n.verifier_config;
    const short = v?.kind === 'command' ? `command recipe "${v.recipe ?? '?'}"` : verifierLabel(v);
    lines.push(`${'  '.repeat(depth)}- ${n.title}${budget ? ` [${budget}]` : ''} (verifier: ${short})`);
    for (const c of n.children ?? []) walk(c, depth + 1);
  };
  walk(tree, 0);
  return lines;
}

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

/** Every command line a proposed tree runs, as the owner must see it (distinct, in tree order). */
export function commandsOf(tree: TreeNode): string[] {
  const out = new Set<string>();
  const walk = (n: TreeNode): void => {
    if (n.verifier_config?.kind === 'command') out.add(verifierLabel(n.verifier_config));
    for (const c of n.children ?? []) walk(c);
  };
  walk(tree);
  return [...out];
}

/** The verifier as the owner must see it: a command verifier's whole command line, its directory and timeout, exactly as they will run. */
export function verifierLabel(v: TreeNode['verifier_config']): string {
  if (!v || v.kind === 'auto') return 'auto';
  if (v.kind === 'peer') return `peer agent ${v.agent_id}`;
  const secrets = v.secrets?.length ? `, with your secrets ${v.secrets.join(', ')}` : '';
  return `recipe "${v.recipe ?? '?'}": sh -c ${JSON.stringify(v.cmd)} in ${v.cwd ?? 'the workspace'}, timeout ${v.timeout_sec ?? 60}s${secrets}`;
}

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);
