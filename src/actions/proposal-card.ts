import { MAX_BODY } from '../commands/channels.js';
import { DomainError } from '../errors.js';
import type { TreeNode } from '../events/proposals.js';
import type { GoalRow } from '../projections/goal-queries.js';

/**
 * The approval card of a task-tree proposal in `#approvals`: the tree as far as it fits, and first,
 * always in full, every command line it would run on the host — recipe, `sh -c "…"`, directory,
 * timeout, granted secrets — so the owner approves exactly what runs (DESIGN §8).
 */
export function renderProposal(goal: GoalRow, proposalId: number, proposer: string, reasoning: string, tree: TreeNode, count: number): string {
  const lines: string[] = [];
  const commands = commandsOf(tree);
  const walk = (n: TreeNode, depth: number): void => {
    const budget = [n.budget_tokens !== undefined ? `${n.budget_tokens} tokens` : '', n.budget_dollars_cents !== undefined ? `${n.budget_dollars_cents}¢` : ''].filter(Boolean).join(', ');
    const v = n.verifier_config;
    const short = v?.kind === 'command' ? `command recipe "${v.recipe ?? '?'}"` : verifierLabel(v);
    lines.push(`${'  '.repeat(depth)}- ${n.title}${budget ? ` [${budget}]` : ''} (verifier: ${short})`);
    for (const c of n.children ?? []) walk(c, depth + 1);
  };
  walk(tree, 0);
  const head = `Task tree proposal #${proposalId} for goal #${goal.goalId} "${goal.title}" by ${proposer} (${count} tasks).`;
  const why = reasoning ? `Reasoning: ${clip(reasoning, 4000)}` : '';
  // Every command line this tree would run, in full and first: the owner must see exactly what runs on the host, however big the tree.
  const run = commands.length ? ['Commands it will run on the host (your verifier recipes, exactly as they run):', ...commands.map((c) => `  * ${c}`)].join('\n') : '';
  const foot = 'React approve or reject (metadata {"reason": "…"}).';
  // A message body holds at most MAX_BODY characters; a big tree is listed as far as it fits (all of it is in the metadata).
  let room = MAX_BODY - head.length - why.length - run.length - foot.length - 200;
  if (room < 0) throw new DomainError('ErrInvalidInput', 'the tree\'s verifier commands are too long to show in full on one approval card: use fewer recipes in one tree', { field: 'tree' });
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

