import type { App } from '../../app.js';
import { commandVerifier, type PeerFact, type RecipeFact, type TreeFacts } from '../../commands/proposal-tree.js';
import type { TreeNode, TreeRequest } from '../../events/proposals.js';
import type { VerifierConfig } from '../../events/tasks.js';
import { goalTotals, type GoalRow } from '../../projections/goal-queries.js';
import { getAgent, sameLineage } from '../../projections/principal-queries.js';
import { pendingTreeProposal } from '../../projections/proposal-queries.js';
import { rootTasksOfGoal } from '../../projections/task-queries.js';
import { activeRecipe } from '../../projections/verifiers.js';
import { recipeProblem } from '../verifiers.js';
import type { StaleRecipe } from '../../commands/proposals.js';
import { treeBlockerIds } from '../../commands/tree-dependencies.js';
import { applySteps } from '../../engine/projection-sql.js';
import { readBlockerFacts } from '../../projections/task-blocker-queries.js';

/**
 * The facts a task-tree proposal is decided on (commands/proposal-tree.ts), read in the proposing command's
 * transaction: the goal, what its budgets hold, its pending proposal, the owner's recipes the tree names
 * the agents it names as peer verifiers and the tasks it names as blockers. And, on approval, the recorded command verifiers whose
 * recipe changed since.
 */
export function treeFacts(app: App, goal: GoalRow, proposer: number | null, request: TreeRequest): TreeFacts {
  const db = app.engine.db;
  const recipes = new Map<string, RecipeFact>();
  const peers = new Map<number, PeerFact>();
  eachNode(request, (node) => {
    const v = node.verifier_config;
    if (v?.kind === 'command' && !recipes.has(v.recipe)) {
      const recipe = activeRecipe(db, goal.ownerId, v.recipe);
      if (recipe) recipes.set(v.recipe, recipe);
    }
    if (v?.kind === 'peer' && !peers.has(v.agent_id)) {
      const agent = getAgent(db, v.agent_id);
      if (agent) {
        const inProposerLineage = proposer !== null && sameLineage(db, proposer, agent.agentId);
        peers.set(v.agent_id, { agentId: agent.agentId, name: agent.name, ownerId: agent.ownerId, inProposerLineage });
      }
    }
  });
  const roots = rootTasksOfGoal(db, goal.goalId);
  const totals = goalTotals(db, goal.goalId);
  const pending = pendingTreeProposal(db, goal.goalId);
  return {
    goal: {
      title: goal.title,
      status: goal.status,
      coordinatorAgentId: goal.coordinatorAgentId,
      budgets: { tokens: goal.budgetTokens, cents: goal.budgetCents },
    },
    spent: { tokens: totals.spentTokens, cents: totals.spentCents },
    heldByRoots: {
      tokens: roots.reduce((n, r) => n + (r.budgetTokens ?? 0), 0),
      cents: roots.reduce((n, r) => n + (r.budgetCents ?? 0), 0),
    },
    pending: pending && { proposalId: pending.proposalId, messageId: pending.messageId },
    recipes: [...recipes.values()],
    peers: [...peers.values()],
    blockers: applySteps(db, readBlockerFacts(goal.ownerId, treeBlockerIds(request))),
  };
}

/**
 * The tree as the `#approvals` card shows it, before the decider has checked it: each command verifier
 * with its recipe's command line where the recipe exists (a tree with a missing one is refused anyway).
 */
export function treeAsProposed(
  request: TreeRequest,
  recipes: readonly RecipeFact[],
): { tree: TreeNode; count: number } {
  let count = 0;
  const walk = (node: TreeRequest): TreeNode => {
    count += 1;
    const v = node.verifier_config;
    const verifier: VerifierConfig | undefined = v?.kind === 'command' ? (commandVerifier(v, recipes) ?? undefined) : v;
    const children = node.children?.map(walk);
    return {
      ...node,
      ...(verifier ? { verifier_config: verifier } : {}),
      ...(children ? { children } : {}),
    } as TreeNode;
  };
  const tree = walk(request);
  return { tree, count };
}

/** On approval: the recorded command verifiers whose recipe was removed or changed since, in tree order. */
export function staleRecipes(app: App, tenant: number, tree: TreeNode): StaleRecipe[] {
  const out: StaleRecipe[] = [];
  const walk = (node: TreeNode, path: string): void => {
    const v = node.verifier_config;
    const problem = v?.kind === 'command' ? recipeProblem(app, tenant, v) : null;
    if (problem) out.push({ path, problem });
    (node.children ?? []).forEach((child, i) => walk(child, `${path}.children[${i}]`));
  };
  walk(tree, 'tree');
  return out;
}

function eachNode(node: TreeRequest, visit: (node: TreeRequest) => void): void {
  visit(node);
  for (const child of node.children ?? []) eachNode(child, visit);
}
