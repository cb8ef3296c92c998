import { MAX_BODY } from './channels.js';
import type { TreeNode } from '../events/proposals.js';
import { oneLine } from '../terminal.js';

/**
 * The approval card of a task-tree proposal in `#approvals`, pure: the tree as far as it fits, and first,
 * always in full, every command line it would run on the host — recipe, `sh -c "…"`, directory, timeout,
 * granted secrets — so the owner approves exactly what runs. A tree whose command lines alone leave no
 * room on one card does not fit (`fits` false): the proposal decider refuses it. What the proposer wrote
 * cannot fake a line of the card: titles and names are one escaped line each, the reasoning is quoted
 * (every line behind `> `) and comes after the command lines.
 */
export interface TreeCard {
  goalId: number;
  goalTitle: string;
  proposalId: number;
  proposer: string;
  reasoning: string;
  tree: TreeNode;
  taskCount: number;
}

export function treeCard(c: TreeCard): { body: string; fits: boolean } {
  const lines = treeOutline(c.tree);
  const commands = commandsOf(c.tree);
  const head = `Task tree proposal #${c.proposalId} for goal #${c.goalId} "${oneLine(c.goalTitle)}" by ${oneLine(c.proposer)} (${c.taskCount} tasks).`;
  const why = c.reasoning ? quoted(`Reasoning (${oneLine(c.proposer)}'s words):`, clip(c.reasoning, 4000)) : '';
  // Every command line this tree would run, in full and first: the owner must see exactly what runs on the host, however big the tree.
  const run = commands.length
    ? [
        'Commands it will run on the host (your verifier recipes, exactly as they run):',
        ...commands.map((x) => `  * ${x}`),
      ].join('\n')
    : '';
  const foot = 'React approve or reject (metadata {"reason": "…"}).';
  // A message body holds at most MAX_BODY characters; a big tree is listed as far as it fits (all of it is in the metadata).
  let room = MAX_BODY - head.length - why.length - run.length - foot.length - 200;
  // Without room for its command lines the card is never posted (the proposal is refused): a short body stands in.
  if (room < 0) return { body: [head, why, foot].filter(Boolean).join('\n'), fits: false };
  const shown: string[] = [];
  for (const line of lines) {
    if (line.length + 1 > room) {
      shown.push(`… and ${lines.length - shown.length} more tasks (the whole tree is in this message's metadata)`);
      break;
    }
    shown.push(line);
    room -= line.length + 1;
  }
  return { body: [head, run, why, ...shown, foot].filter(Boolean).join('\n'), fits: true };
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
    const waits = [...(n.blocked_by ?? []).map((id) => `#${id}`), ...(n.blocked_by_nodes ?? []).map(oneLine)];
    const after = waits.length ? ` (waits on ${waits.join(', ')})` : '';
    lines.push(
      `${'  '.repeat(depth)}- ${oneLine(n.title)}${budget ? ` [${budget}]` : ''} (verifier: ${short})${after}`,
    );
    for (const c of n.children ?? []) walk(c, depth + 1);
  };
  walk(tree, 0);
  return lines;
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
  const where = v.cwd ?? "the task's project, else the assignee's working directory";
  return `recipe "${v.recipe ?? '?'}": sh -c ${JSON.stringify(v.cmd)} in ${where} (${v.writable ? 'writable' : 'read-only'}), timeout ${v.timeout_sec ?? 60}s${secrets}`;
}

/** Someone's words under a header, each line behind `> `: none of them can pass for a line of the card. */
export const quoted = (header: string, text: string): string =>
  [header, ...text.split(/\r\n|[\n\r\u2028\u2029]/).map((l) => `> ${oneLine(l)}`)].join('\n');

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);
