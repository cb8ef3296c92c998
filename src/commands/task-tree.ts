import { DomainError, invalidInput } from '../errors.js';
import type { Budgets } from '../events/goals.js';
import type { TreeNode } from '../events/proposals.js';
import { ANCESTRY_CAP_BYTES, DEFAULT_BILLING_CODE, type AncestryNode, type TaskCreated } from '../events/tasks.js';

/**
 * Task trees, pure: checking a proposed tree (for the proposal decider: proposal-tree.ts), and planning
 * the tasks its approval creates (ids in depth-first order, parent links, depth, ancestry snapshots).
 *
 * Budget cascade: a node's budget must fit in what its nearest budgeted ancestor — or the goal — has
 * left after the siblings before it took theirs (ErrBudgetInsufficient). A tree holds at most
 * MAX_TREE_TASKS tasks, and no task's ancestry snapshot may outgrow its cap (ErrAncestryOverflow).
 */
/** The most tasks one proposal may create (its message carries the whole tree). */
export const MAX_TREE_TASKS = 2_000;

type Plan = Omit<TaskCreated['data'], 'notice' | 'goalId' | 'channelId' | 'by' | 'proposalId'>;
type Dim = 'tokens' | 'cents';
const FIELD: Record<Dim, 'budget_tokens' | 'budget_dollars_cents'> = {
  tokens: 'budget_tokens',
  cents: 'budget_dollars_cents',
};

/** Counts nodes and checks the cascade; throws the first problem with the node's path (e.g. `tree.children[1]`). */
export function checkTree(tree: TreeNode, goalLeft: Budgets): number {
  let count = 0;
  // One counter per budgeted node and dimension; a node without a budget draws on its nearest budgeted ancestor's.
  interface Left {
    value: number | null;
  }
  const walk = (node: TreeNode, path: string, left: Record<Dim, Left>): void => {
    count += 1;
    const mine: Record<Dim, Left> = { ...left };
    for (const dim of ['tokens', 'cents'] as const) {
      const asked = node[FIELD[dim]];
      if (asked === undefined) continue;
      const available = left[dim].value;
      if (available !== null && asked > available) {
        throw new DomainError(
          'ErrBudgetInsufficient',
          `${path}.${FIELD[dim]} is ${asked} but only ${available} is left in the budget above it`,
          { path, field: FIELD[dim], requested: asked, remaining: available },
        );
      }
      if (available !== null) left[dim].value = available - asked;
      mine[dim] = { value: asked };
    }
    (node.children ?? []).forEach((child, i) => walk(child, `${path}.children[${i}]`, mine));
  };
  walk(tree, 'tree', { tokens: { value: goalLeft.tokens }, cents: { value: goalLeft.cents } });
  if (count > MAX_TREE_TASKS)
    throw invalidInput(
      `a task tree holds at most ${MAX_TREE_TASKS} tasks; this one has ${count}: propose it in parts`,
      { field: 'tree', count },
    );
  // A placeholder id as long as any id this tree could get keeps the ancestry check honest before approval.
  planTree(tree, () => 999_999_999_999);
  return count;
}

/**
 * The tasks an approval creates, parents before children; `nextId` hands out task ids. A node's blockers
 * are the goal's tasks it names and the tasks of the nodes it names by path.
 */
export function planTree(tree: TreeNode, nextId: () => number): Plan[] {
  const plans: Plan[] = [];
  const idOf = new Map<string, number>();
  const waits: { plan: Plan; node: TreeNode }[] = [];
  const walk = (
    node: TreeNode,
    parent: { id: number; ancestry: AncestryNode[]; billing: string; node: TreeNode } | null,
    path: string,
  ): void => {
    const taskId = nextId();
    idOf.set(path, taskId);
    const ancestry: AncestryNode[] = parent ? [...parent.ancestry, ancestryNode(parent.id, parent.node)] : [];
    const bytes = Buffer.byteLength(JSON.stringify(ancestry));
    if (bytes > ANCESTRY_CAP_BYTES) {
      throw new DomainError('ErrAncestryOverflow', `task ancestry exceeds 16 KB cap at ${path} (${bytes} bytes)`, {
        path,
        bytes,
        cap: ANCESTRY_CAP_BYTES,
      });
    }
    const billingCode = node.billing_code ?? parent?.billing ?? DEFAULT_BILLING_CODE;
    plans.push({
      taskId,
      parentId: parent?.id ?? null,
      depth: ancestry.length,
      ancestry,
      title: node.title,
      description: node.description,
      acceptanceCriteria: node.acceptance_criteria ?? '',
      billingCode,
      budgets: { tokens: node.budget_tokens ?? null, cents: node.budget_dollars_cents ?? null },
      verifier: node.verifier_config ?? { kind: 'auto' },
      heartbeat: node.heartbeat_config ?? null,
      status: 'approved',
    });
    if (node.blocked_by?.length || node.blocked_by_nodes?.length) waits.push({ plan: plans.at(-1)!, node });
    (node.children ?? []).forEach((child, i) =>
      walk(child, { id: taskId, ancestry, billing: billingCode, node }, `${path}.children[${i}]`),
    );
  };
  walk(tree, null, 'tree');
  // The proposal decider checked every path (tree-dependencies.ts): each names a node of this tree.
  for (const { plan, node } of waits)
    plan.blockedBy = [...(node.blocked_by ?? []), ...(node.blocked_by_nodes ?? []).map((p) => idOf.get(p)!)];
  return plans;
}

function ancestryNode(id: number, node: TreeNode): AncestryNode {
  return node.acceptance_criteria
    ? { id, title: node.title, acceptance_criteria: node.acceptance_criteria }
    : { id, title: node.title };
}

/**
 * SynapBus's slug: lowercase; keep [a-z0-9]; space - _ / . become one '-'; drop the
 * rest; trim '-'; empty → "goal". Capped so `goal-<slug>-NN` stays within a 64-character channel name.
 */
export const SLUG_MAX = 64 - 'goal-'.length - '-99'.length;
export function slugify(title: string): string {
  let out = '';
  for (const ch of title.trim().toLowerCase()) {
    if (/[a-z0-9]/.test(ch)) out += ch;
    else if (' -_/.'.includes(ch) && out.length > 0 && !out.endsWith('-')) out += '-';
  }
  out = out.slice(0, SLUG_MAX).replace(/^-+|-+$/g, '');
  return out || 'goal';
}
