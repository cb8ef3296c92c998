import type { App } from '../app.js';
import { channelDecider } from '../commands/channels.js';
import { goalDecider } from '../commands/goals.js';
import { proposalDecider } from '../commands/proposals.js';
import { taskDecider } from '../commands/tasks.js';
import { checkTree, planTree } from '../commands/task-tree.js';
import { autoApprovable } from '../commands/tiers.js';
import { DomainError } from '../errors.js';
import { channelStream } from '../events/channels.js';
import { goalStream } from '../events/goals.js';
import { proposalStream, type TreeNode, type TreeRequest } from '../events/proposals.js';
import { taskStream } from '../events/tasks.js';
import { getMessage, messageFacts } from '../projections/channel-queries.js';
import { getAgent, sameLineage } from '../projections/principals.js';
import { goalTotals, type GoalRow } from '../projections/goal-queries.js';
import { rootTasksOfGoal } from '../projections/task-queries.js';
import {
  getProposal,
  pendingTreeProposal,
  proposalByMessage,
  type ProposalRow,
} from '../projections/proposal-queries.js';
import { sendToChannel, toggleReaction } from './channels.js';
import { agentIdOf, goalFor, isOwner, who } from './goals.js';
import { materializeAgent } from './agents/materialize.js';
import { commandVerifierOf, recipeProblem } from './verifiers.js';
import { renderProposal } from './proposals/card.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';
import { sendSystemDirect } from './notifications.js';

/**
 * Task-tree proposals: posted to `#approvals` with the whole tree, decided once by the goal's owner
 * (a reaction, `colony approve|reject`, or at once by `system` in auto mode). Approval materializes
 * every task, decides the proposal and activates the goal in one command: all of it or none of it.
 */
export interface Proposed {
  proposalId: number;
  proposalMessageId: number;
  channelId: number;
  approved: boolean;
  taskIds: number[];
}

export function proposeTaskTree(
  app: App,
  by: Speaker,
  goalId: number,
  reasoning: string,
  request: TreeRequest,
  actor: CommandOptions,
): Proposed {
  const result = app.engine.transact(actor, (uow) => {
    const db = app.engine.db;
    const goal = goalFor(app, by, goalId);
    if (!isOwner(by) && agentIdOf(by) !== goal.coordinatorAgentId) {
      throw new DomainError(
        'ErrNotCoordinator',
        `only goal ${goalId}'s coordinator or owner may propose its task tree`,
        { goal_id: goalId },
      );
    }
    if (goal.status === 'completed' || goal.status === 'cancelled')
      throw new DomainError('ErrGoalClosed', `goal ${goalId} is ${goal.status}`, { goal_id: goalId });
    const pending = pendingTreeProposal(db, goalId);
    if (pending) {
      throw new DomainError(
        'ErrProposalPending',
        `goal ${goalId} already has a pending task-tree proposal (${pending.proposalId}): wait for the owner's decision`,
        { goal_id: goalId, proposal_id: pending.proposalId, proposal_message_id: pending.messageId },
      );
    }
    const tree = resolveVerifiers(app, goal, by, request);
    const taskCount = checkTree(tree, budgetLeft(app, goal));
    const proposalId = uow.ids.next('proposal');
    const body = renderProposal(goal, proposalId, by.name, reasoning, tree, taskCount);
    const sent = sendToChannel(
      app,
      by,
      { name: 'approvals' },
      {
        body,
        subject: `Task tree for goal #${goalId}: ${goal.title}`,
        priority: 7,
        metadata: {
          kind: 'task_proposal',
          proposal_id: proposalId,
          goal_id: goalId,
          task_count: taskCount,
          tree,
          reasoning,
        },
        replyTo: null,
      },
      actor,
    );
    app.engine.handle(
      proposalDecider,
      proposalStream(proposalId),
      {
        type: 'ProposeTree',
        proposal: {
          proposalId,
          goalId,
          ownerId: goal.ownerId,
          proposer: who(by),
          reasoning,
          tree,
          taskCount,
          messageId: sent.messageId,
          channelId: sent.channelId,
        },
      },
      actor,
    );
    const proposer = agentIdOf(by);
    const tier = proposer === null ? null : (getAgent(db, proposer)?.tier ?? null);
    return {
      proposalId,
      proposalMessageId: sent.messageId,
      channelId: sent.channelId,
      auto: autoApprovable(goal.approvalMode, 'task_tree', tier),
    };
  });
  const p = result.value ?? fromEvents(result.events);
  if (!p.auto || getProposal(app.engine.db, p.proposalId)?.status !== 'pending') {
    return { ...p, approved: getProposal(app.engine.db, p.proposalId)?.status === 'approved', taskIds: [] };
  }
  const decided = autoApprove(app, by.tenant, p.proposalId, result.events[0]?.meta.commandId);
  return { ...p, approved: true, taskIds: decided.taskIds };
}

/** Auto mode (DESIGN §3.3): `system` approves at once, as its own command caused by the proposal's. */
export function autoApprove(
  app: App,
  tenant: number,
  proposalId: number,
  causationId: string | undefined,
): ReturnType<typeof decideProposal> {
  const system: Speaker = { key: 'system', name: 'system', tenant };
  return decideProposal(app, system, proposalId, 'approve', '', { actor: 'system', causationId }, true);
}

function fromEvents(events: readonly { type: string; data: unknown }[]) {
  const d = events.find((e) => e.type === 'TaskTreeProposed')!.data as {
    proposalId: number;
    messageId: number;
    channelId: number;
  };
  return { proposalId: d.proposalId, proposalMessageId: d.messageId, channelId: d.channelId, auto: false };
}

/**
 * The tree as the proposal records it. A command verifier names an owner-registered recipe and gets its
 * exact command line copied in (what the card shows is what runs). A peer verifier must be an agent of
 * the goal's owner (a task no one can verify would wait forever) and independent of the proposer: not
 * the proposer itself nor in its spawn lineage — the team that proposes the work does it, and a verdict
 * never comes from the worker or its lineage (claims are checked again against the verifier).
 */
function resolveVerifiers(app: App, goal: GoalRow, by: Speaker, request: TreeRequest): TreeNode {
  const proposer = agentIdOf(by);
  const walk = (node: TreeRequest, path: string, depth: number): TreeNode => {
    if (depth > MAX_TREE_DEPTH)
      throw new DomainError('ErrInvalidInput', `${path}: a task tree is at most ${MAX_TREE_DEPTH} levels deep`, {
        path,
        max_depth: MAX_TREE_DEPTH,
      });
    const v = node.verifier_config;
    if (v?.kind === 'peer') checkPeer(app, goal, proposer, v.agent_id, path);
    const verifier = v?.kind === 'command' ? commandVerifierOf(app, goal.ownerId, v.recipe, v.cwd, path) : v;
    const children = node.children?.map((c, i) => walk(c, `${path}.children[${i}]`, depth + 1));
    return {
      ...node,
      ...(verifier ? { verifier_config: verifier } : {}),
      ...(children ? { children } : {}),
    } as TreeNode;
  };
  return walk(request, 'tree', 1);
}

/** How deep a proposed tree may nest (the ancestry cap would stop it later; this says so plainly). */
export const MAX_TREE_DEPTH = 32;

function checkPeer(app: App, goal: GoalRow, proposer: number | null, agentId: number, path: string): void {
  const agent = getAgent(app.engine.db, agentId);
  if (!agent || agent.ownerId !== goal.ownerId) {
    throw new DomainError('ErrNotFound', `${path}.verifier_config.agent_id: agent ${agentId} not found`, {
      path,
      agent_id: agentId,
    });
  }
  if (proposer !== null && sameLineage(app.engine.db, proposer, agentId)) {
    throw new DomainError(
      'ErrSelfVerification',
      `${path}.verifier_config.agent_id: agent ${agent.name} is ${agentId === proposer ? 'the proposer itself' : "in the proposer's spawn lineage"}: a verdict must come from an agent independent of the work`,
      { path, agent_id: agentId },
    );
  }
}

/** On approval: every command verifier's recipe must still be the one the card showed. */
function checkRecipesStillThere(app: App, tenant: number, tree: TreeNode): void {
  const walk = (node: TreeNode, path: string): void => {
    const v = node.verifier_config;
    const problem = v?.kind === 'command' ? recipeProblem(app, tenant, v) : null;
    if (problem)
      throw new DomainError(
        'ErrVerifierNotFound',
        `${path}: ${problem} — reject this proposal and propose the tree again`,
        { path },
      );
    (node.children ?? []).forEach((child, i) => walk(child, `${path}.children[${i}]`));
  };
  walk(tree, 'tree');
}

/** What the goal's budgets leave for a new tree: the budget minus what earlier trees' roots hold or spent. */
function budgetLeft(app: App, goal: GoalRow): { tokens: number | null; cents: number | null } {
  const roots = rootTasksOfGoal(app.engine.db, goal.goalId);
  const t = goalTotals(app.engine.db, goal.goalId);
  const held = (budget: 'budgetTokens' | 'budgetCents', spent: number) =>
    Math.max(
      roots.reduce((n, r) => n + (r[budget] ?? 0), 0),
      spent,
    );
  return {
    tokens: goal.budgetTokens === null ? null : Math.max(0, goal.budgetTokens - held('budgetTokens', t.spentTokens)),
    cents: goal.budgetCents === null ? null : Math.max(0, goal.budgetCents - held('budgetCents', t.spentCents)),
  };
}

/**
 * Decides a proposal. `by` must be the goal's owner (or `system` for auto mode). The decision reaction
 * is added to the proposal message unless the caller is reacting already (`fromReaction`).
 */
export function decideProposal(
  app: App,
  by: Speaker,
  proposalId: number,
  decision: 'approve' | 'reject',
  reason: string,
  actor: CommandOptions,
  auto = false,
  fromReaction = false,
): { proposal: ProposalRow; taskIds: number[] } {
  const result = app.engine.transact(actor, (uow) => {
    const proposal = getProposal(app.engine.db, proposalId);
    if (!proposal || proposal.ownerId !== by.tenant)
      throw new DomainError('ErrProposalNotFound', `proposal ${proposalId} not found`, { proposal_id: proposalId });
    if (!isOwner(by) && !(auto && by.key === 'system'))
      throw new DomainError('ErrForbidden', "only the goal's owner decides its proposals", { proposal_id: proposalId });
    // Said before anything else runs: approving a spawned agent again would otherwise fail on its name (ErrAgentNameTaken).
    if (proposal.status !== 'pending')
      throw new DomainError('ErrProposalDecided', `proposal ${proposalId} was already ${proposal.status}`, {
        proposal_id: proposalId,
        status: proposal.status,
      });
    const goal = goalFor(app, by, proposal.goalId);
    if (!fromReaction) {
      const held = getMessage(app.engine.db, proposal.messageId)?.reactions.some(
        (r) => r.reaction === decision && r.by === by.name,
      );
      if (!held) {
        const target = messageFacts(app.engine.db, proposal.messageId);
        app.engine.handle(
          channelDecider,
          channelStream(proposal.channelId),
          {
            type: 'ToggleReaction',
            by,
            messageId: proposal.messageId,
            reaction: decision,
            metadata: reason ? { reason } : null,
            target,
          },
          actor,
        );
      }
    }
    if (decision === 'reject') {
      app.engine.handle(
        proposalDecider,
        proposalStream(proposalId),
        { type: 'RejectProposal', by: who(by), reason },
        actor,
      );
      const what =
        proposal.kind === 'agent'
          ? `agent proposal #${proposalId} (${(proposal.tree as { name: string }).name})`
          : `task-tree proposal #${proposalId}`;
      sendSystemDirect(
        app,
        by.tenant,
        proposal.proposerKey,
        `Your ${what} for goal #${goal.goalId} "${goal.title}" was rejected by ${by.name}: ${reason}. You may revise it and propose again.`,
        { event: 'ProposalRejected', proposal_id: proposalId, goal_id: goal.goalId, reason },
        actor,
      );
      return [];
    }
    if (proposal.kind === 'agent') {
      materializeAgent(app, by, proposal, goal, auto, actor);
      return [];
    }
    checkRecipesStillThere(app, goal.ownerId, proposal.tree as TreeNode);
    const plans = planTree(proposal.tree as TreeNode, () => uow.ids.next('task'));
    app.engine.handle(
      proposalDecider,
      proposalStream(proposalId),
      { type: 'ApproveProposal', by: who(by), auto, taskIds: plans.map((p) => p.taskId) },
      actor,
    );
    for (const plan of plans) {
      app.engine.handle(
        taskDecider,
        taskStream(plan.taskId),
        {
          type: 'CreateTask',
          task: { ...plan, goalId: goal.goalId, channelId: goal.channelId, by: who(by), proposalId },
        },
        actor,
      );
    }
    app.engine.handle(goalDecider, goalStream(goal.goalId), { type: 'ActivateGoal', proposalId, by: who(by) }, actor);
    // A person's approval comes later than the proposing call: tell the proposer (it wakes it), or its leaves
    // would wait with no one to hand them out. Auto mode answered the proposing call itself.
    if (!auto) {
      sendSystemDirect(
        app,
        by.tenant,
        proposal.proposerKey,
        approvedText(goal, proposalId, plans, by.name),
        {
          event: 'ProposalApproved',
          proposal_id: proposalId,
          goal_id: goal.goalId,
          task_ids: plans.map((p) => p.taskId),
        },
        actor,
      );
    }
    return plans.map((p) => p.taskId);
  });
  return { proposal: getProposal(app.engine.db, proposalId)!, taskIds: result.value ?? [] };
}

function approvedText(
  goal: { goalId: number; title: string },
  proposalId: number,
  plans: readonly { taskId: number; parentId: number | null }[],
  by: string,
): string {
  const parents = new Set(plans.map((p) => p.parentId));
  const leaves = plans.filter((p) => !parents.has(p.taskId)).map((p) => `#${p.taskId}`);
  return (
    `Your task-tree proposal #${proposalId} for goal #${goal.goalId} "${goal.title}" was approved by ${by}: ${plans.length} task${plans.length === 1 ? '' : 's'} ` +
    `(#${plans[0]!.taskId}–#${plans.at(-1)!.taskId}). Its leaves ${leaves.join(', ')} wait for a claim: hand them out — spawn agents for them ` +
    "(propose_agent) or tell your team's agents which to claim (send_message)."
  );
}

/** The proposal a reaction decides, if it is an approve/reject on a pending proposal message. */
export function proposalDecidedBy(app: App, messageId: number, reaction: string): ProposalRow | null {
  if (reaction !== 'approve' && reaction !== 'reject') return null;
  const p = proposalByMessage(app.engine.db, messageId);
  return p && p.status === 'pending' ? p : null;
}

/**
 * The react tool's command: toggles the reaction and, when it is the owner's approve / reject on a
 * pending proposal, decides the proposal in the same transaction (a non-owner's decision is refused whole).
 */
export function reactTo(
  app: App,
  by: Speaker,
  messageId: number,
  reaction: Parameters<typeof toggleReaction>[3],
  metadata: Record<string, unknown> | null,
  actor: CommandOptions,
): { added: boolean; decided: Decided | null } {
  const result = app.engine.transact(actor, () => {
    const proposal = proposalDecidedBy(app, messageId, reaction);
    const { added } = toggleReaction(app, by, messageId, reaction, metadata, actor);
    if (!proposal || !added) return { added, decided: null };
    const reason =
      typeof metadata?.reason === 'string' && metadata.reason.trim() ? metadata.reason.trim() : '(no reason given)';
    return {
      added,
      decided: decideProposal(
        app,
        by,
        proposal.proposalId,
        reaction as 'approve' | 'reject',
        reason,
        actor,
        false,
        true,
      ),
    };
  });
  return (
    result.value ?? {
      added: result.events.some((e) => e.type === 'ReactionAdded'),
      decided: decidedIn(app, result.events),
    }
  );
}

/** What a decision did: the proposal as decided and the tasks an approved tree created. */
export interface Decided {
  proposal: ProposalRow;
  taskIds: number[];
}

/** A retried reaction (same idempotency key) answers with the decision its first call made. */
function decidedIn(app: App, events: readonly { type: string; data: unknown }[]): Decided | null {
  const e = events.find((x) => x.type === 'ProposalApproved' || x.type === 'ProposalRejected');
  if (!e) return null;
  const d = e.data as { proposalId: number; taskIds?: number[] };
  return { proposal: getProposal(app.engine.db, d.proposalId)!, taskIds: d.taskIds ?? [] };
}
