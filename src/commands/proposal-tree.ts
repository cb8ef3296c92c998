import { isOwner } from '../events/principals.js';
import { DomainError } from '../errors.js';
import type { Budgets, GoalStatus } from '../events/goals.js';
import type { TaskTreeProposed, TreeNode, TreeRequest } from '../events/proposals.js';
import type { VerifierConfig } from '../events/tasks.js';
import { treeCard } from './proposal-card.js';
import { checkTree } from './task-tree.js';
import type { BlockerFact } from './task-dependencies.js';
import { checkTreeBlockers } from './tree-dependencies.js';

/**
 * Proposing a goal's task tree, decided from facts read in the same transaction: only the goal's owner
 * or its coordinator proposes; a completed or cancelled goal takes no tree; one proposal waits for the
 * owner at a time. Then the tree itself, node by node in depth-first order: at most MAX_TREE_DEPTH levels;
 * a peer verifier is an agent of the goal's owner (a task no one can verify would wait forever) and
 * independent of the proposer — not the proposer itself nor in its spawn lineage, since the team that
 * proposes the work does it; a command verifier names one of the owner's recipes and records its exact
 * command line (what the card shows is what runs). Then the budget cascade (task-tree.ts) against what
 * the goal's budgets leave, the nodes' blockers (tree-dependencies.ts: no cycle), and the approval card
 * must show every command line in full.
 */
export const MAX_TREE_DEPTH = 32;

/** One of the owner's active verifier recipes, as a command verifier records it. */
export interface RecipeFact {
  recipeId: number;
  name: string;
  command: string;
  cwd: string | null;
  /** Its processes may write in its directory (its own `cwd` only). */
  writable: boolean;
  timeoutSec: number;
  secrets: readonly string[];
}
/** An agent the tree names as a peer verifier; `inProposerLineage`: it is the proposer or of its spawn lineage. */
export interface PeerFact {
  agentId: number;
  name: string;
  ownerId: number;
  inProposerLineage: boolean;
}
export interface TreeFacts {
  goal: { title: string; status: GoalStatus; coordinatorAgentId: number; budgets: Budgets };
  /** The goal's spend so far, and what the roots of its earlier trees hold of its budgets. */
  spent: { tokens: number; cents: number };
  heldByRoots: { tokens: number; cents: number };
  /** The goal's task-tree proposal still waiting for the owner, if any. */
  pending: { proposalId: number; messageId: number } | null;
  /** The owner's active recipes and the agents the tree names (missing ones are simply absent). */
  recipes: readonly RecipeFact[];
  peers: readonly PeerFact[];
  /** The tasks the tree's nodes name in `blocked_by`, as the owner's tenant has them (missing ones are absent). */
  blockers: readonly BlockerFact[];
}
export type ProposeTree = {
  type: 'ProposeTree';
  proposal: Omit<TaskTreeProposed['data'], 'tree' | 'taskCount'>;
  request: TreeRequest;
  facts: TreeFacts;
};

export function proposeTree(c: ProposeTree): TaskTreeProposed {
  const { proposal: p, facts } = c;
  mayPropose(p, facts);
  const tree = resolveTree(c.request, facts, p.proposer.key, p.ownerId);
  const taskCount = checkTree(tree, budgetLeft(facts));
  checkTreeBlockers(tree, p.goalId, facts.blockers);
  const card = treeCard({
    goalId: p.goalId,
    goalTitle: facts.goal.title,
    proposalId: p.proposalId,
    proposer: p.proposer.name,
    reasoning: p.reasoning,
    tree,
    taskCount,
  });
  if (!card.fits) {
    throw new DomainError(
      'ErrInvalidInput',
      "the tree's verifier commands are too long to show in full on one approval card: use fewer recipes in one tree",
      { field: 'tree' },
    );
  }
  return {
    type: 'TaskTreeProposed',
    data: {
      proposalId: p.proposalId,
      goalId: p.goalId,
      ownerId: p.ownerId,
      proposer: p.proposer,
      reasoning: p.reasoning,
      tree,
      taskCount,
      messageId: p.messageId,
      channelId: p.channelId,
    },
  };
}

function mayPropose(p: ProposeTree['proposal'], f: TreeFacts): void {
  const key = p.proposer.key;
  if (!isOwner({ key }, p.ownerId) && key !== `agent-${f.goal.coordinatorAgentId}`) {
    throw new DomainError(
      'ErrNotCoordinator',
      `only goal ${p.goalId}'s coordinator or owner may propose its task tree`,
      { goal_id: p.goalId },
    );
  }
  const status = f.goal.status;
  if (status === 'completed' || status === 'cancelled')
    throw new DomainError('ErrGoalClosed', `goal ${p.goalId} is ${status}`, { goal_id: p.goalId });
  if (f.pending) {
    throw new DomainError(
      'ErrProposalPending',
      `goal ${p.goalId} already has a pending task-tree proposal (${f.pending.proposalId}): wait for the owner's decision`,
      { goal_id: p.goalId, proposal_id: f.pending.proposalId, proposal_message_id: f.pending.messageId },
    );
  }
}

/** The tree as the proposal records it; throws the first problem in depth-first order. */
function resolveTree(request: TreeRequest, f: TreeFacts, proposerKey: string, ownerId: number): TreeNode {
  const proposer = proposerKey.startsWith('agent-') ? Number(proposerKey.slice('agent-'.length)) : null;
  const walk = (node: TreeRequest, path: string, depth: number): TreeNode => {
    if (depth > MAX_TREE_DEPTH)
      throw new DomainError('ErrInvalidInput', `${path}: a task tree is at most ${MAX_TREE_DEPTH} levels deep`, {
        path,
        max_depth: MAX_TREE_DEPTH,
      });
    const v = node.verifier_config;
    if (v?.kind === 'peer')
      checkPeer(
        f.peers.find((a) => a.agentId === v.agent_id),
        v.agent_id,
        ownerId,
        proposer,
        path,
      );
    if (v?.kind === 'command' && v.cwd !== undefined && proposer !== null)
      throw new DomainError(
        'ErrVerifierCwdNotAllowed',
        `${path}.verifier_config.cwd: a command verifier runs in its recipe's own directory, else where the checked work lies (the task's project, else the assignee's working directory), read-only — a tree proposed by an agent cannot choose where the owner's command runs`,
        { path },
      );
    const verifier = v?.kind === 'command' ? recipeVerifier(v, f.recipes, path) : v;
    const children = node.children?.map((child, i) => walk(child, `${path}.children[${i}]`, depth + 1));
    return {
      ...node,
      ...(verifier ? { verifier_config: verifier } : {}),
      ...(children ? { children } : {}),
    } as TreeNode;
  };
  return walk(request, 'tree', 1);
}

function recipeVerifier(
  v: { recipe: string; cwd?: string },
  recipes: readonly RecipeFact[],
  path: string,
): VerifierConfig {
  const verifier = commandVerifier(v, recipes);
  if (verifier) return verifier;
  throw new DomainError(
    'ErrVerifierNotFound',
    `${path}.verifier_config.recipe: no verifier recipe named "${v.recipe}": the owner registers them with \`colony verifiers add\` (list_verifiers shows them)`,
    { path, recipe: v.recipe },
  );
}

function checkPeer(
  agent: PeerFact | undefined,
  agentId: number,
  ownerId: number,
  proposer: number | null,
  path: string,
): void {
  if (!agent || agent.ownerId !== ownerId) {
    throw new DomainError('ErrNotFound', `${path}.verifier_config.agent_id: agent ${agentId} not found`, {
      path,
      agent_id: agentId,
    });
  }
  if (proposer !== null && agent.inProposerLineage) {
    throw new DomainError(
      'ErrSelfVerification',
      `${path}.verifier_config.agent_id: agent ${agent.name} is ${agentId === proposer ? 'the proposer itself' : "in the proposer's spawn lineage"}: a verdict must come from an agent independent of the work`,
      { path, agent_id: agentId },
    );
  }
}

/**
 * A command verifier as the task records it: the recipe's id and exact command line, its working directory
 * (the recipe's, else the owner's tree's, else none: where the checked work lies), whether it may write
 * there (the recipe's own directory only), timeout and granted secrets; null without such a recipe.
 */
export function commandVerifier(
  v: { recipe: string; cwd?: string },
  recipes: readonly RecipeFact[],
): Extract<VerifierConfig, { kind: 'command' }> | null {
  const recipe = recipes.find((r) => r.name === v.recipe);
  if (!recipe) return null;
  const dir = recipe.cwd ?? v.cwd;
  return {
    kind: 'command',
    recipe: recipe.name,
    recipeId: recipe.recipeId,
    cmd: recipe.command,
    timeout_sec: recipe.timeoutSec,
    ...(dir !== undefined ? { cwd: dir } : {}),
    ...(recipe.writable && recipe.cwd !== null ? { writable: true } : {}),
    ...(recipe.secrets.length ? { secrets: [...recipe.secrets] } : {}),
  };
}

/** What the goal's budgets leave for a new tree: the budget minus what earlier trees' roots hold or spent, whichever is more. */
function budgetLeft(f: TreeFacts): Budgets {
  const left = (budget: number | null, held: number, spent: number): number | null =>
    budget === null ? null : Math.max(0, budget - Math.max(held, spent));
  return {
    tokens: left(f.goal.budgets.tokens, f.heldByRoots.tokens, f.spent.tokens),
    cents: left(f.goal.budgets.cents, f.heldByRoots.cents, f.spent.cents),
  };
}
