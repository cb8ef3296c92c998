import type { App } from '../../app.js';
import { channelDecider } from '../../commands/channels.js';
import { goalDecider } from '../../commands/goals.js';
import { proposalDecider } from '../../commands/proposals.js';
import { taskDecider } from '../../commands/tasks.js';
import { planTree } from '../../commands/task-tree.js';
import { DomainError } from '../../errors.js';
import { channelStream } from '../../events/channels.js';
import { goalStream } from '../../events/goals.js';
import { proposalStream, type TreeNode } from '../../events/proposals.js';
import { taskStream } from '../../events/tasks.js';
import { type Speaker } from '../../events/principals.js';
import { type CommandOptions } from '../../engine/handle.js';
import { getMessage, messageFacts } from '../../projections/channel-queries.js';
import { type GoalRow } from '../../projections/goal-queries.js';
import { getProposal, proposalsOfGoal, type ProposalRow } from '../../projections/proposal-queries.js';
import { goalFor, who } from '../goals.js';
import { materializeAgent } from '../agents/materialize.js';
import { sendSystemDirect } from '../notifications.js';
import { staleRecipes } from './tree-facts.js';

/**
 * Deciding a proposal: the goal's owner approves or rejects it (a reaction, `colony approve|reject`, the
 * console), or `system` approves it at once for a goal in auto mode. Who may decide, and whether it is
 * still open, is the proposal decider's to say (commands/proposals.ts); these functions find the proposal,
 * mark the decision on its `#approvals` message, route the decision and tell the proposer.
 */

/** What a decision did: the proposal as decided and the tasks an approved tree created. */
export interface Decided {
  proposal: ProposalRow;
  taskIds: number[];
}

/** Auto mode: `system` approves at once, as its own command caused by the proposal's. */
export function autoApprove(app: App, tenant: number, proposalId: number, causationId: string | undefined): Decided {
  const system: Speaker = { key: 'system', name: 'system', tenant };
  return decideProposal(app, system, proposalId, 'approve', '', { actor: 'system', causationId }, true);
}

/**
 * Decides a proposal as `by`. The decision reaction is added to the proposal message unless the caller
 * is reacting already (`fromReaction`).
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
): Decided {
  const result = app.engine.transact(actor, () => {
    const proposal = getProposal(app.engine.db, proposalId);
    if (!proposal || proposal.ownerId !== by.tenant)
      throw new DomainError('ErrProposalNotFound', `proposal ${proposalId} not found`, { proposal_id: proposalId });
    const goal = goalFor(app, by, proposal.goalId);
    if (!fromReaction) markDecision(app, by, proposal, decision, reason, actor);
    if (decision === 'reject') {
      reject(app, by, proposal, goal, reason, actor);
      return [];
    }
    if (proposal.kind === 'agent') {
      materializeAgent(app, by, proposal, goal, auto, actor);
      return [];
    }
    return approveTree(app, by, proposal, goal, auto, actor);
  });
  return { proposal: getProposal(app.engine.db, proposalId)!, taskIds: result.value ?? [] };
}

/**
 * A goal closed (completed, stuck or cancelled) leaves nothing for its pending proposals to decide: Colony
 * rejects each with the reason, and its proposer is told — so none waits on the owner for a goal that is over.
 */
export function withdrawPendingProposals(app: App, goal: GoalRow, reason: string, actor: CommandOptions): void {
  const colony: Speaker = { key: 'system', name: 'Colony', tenant: goal.ownerId };
  for (const p of proposalsOfGoal(app.engine.db, goal.goalId).filter((x) => x.status === 'pending'))
    reject(app, colony, p, goal, reason, actor, true);
}

/** The decider's reaction on the proposal message, unless it is there already. */
function markDecision(
  app: App,
  by: Speaker,
  proposal: ProposalRow,
  decision: 'approve' | 'reject',
  reason: string,
  actor: CommandOptions,
): void {
  const held = getMessage(app.engine.db, proposal.messageId)?.reactions.some(
    (r) => r.reaction === decision && r.by === by.name,
  );
  if (held) return;
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

function reject(
  app: App,
  by: Speaker,
  proposal: ProposalRow,
  goal: GoalRow,
  reason: string,
  actor: CommandOptions,
  withdrawn = false,
): void {
  const proposalId = proposal.proposalId;
  app.engine.handle(
    proposalDecider,
    proposalStream(proposalId),
    { type: 'RejectProposal', by: who(by), reason, withdrawn },
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
}

/** Approval of a tree: the proposal, then every task, then the goal's activation — one command. */
function approveTree(
  app: App,
  by: Speaker,
  proposal: ProposalRow,
  goal: GoalRow,
  auto: boolean,
  actor: CommandOptions,
): number[] {
  const proposalId = proposal.proposalId;
  const tree = proposal.tree as TreeNode;
  const plans = app.engine.transact(actor, (uow) => planTree(tree, () => uow.ids.next('task'))).value!;
  const taskIds = plans.map((p) => p.taskId);
  app.engine.handle(
    proposalDecider,
    proposalStream(proposalId),
    { type: 'ApproveProposal', by: who(by), auto, taskIds, staleRecipes: staleRecipes(app, goal.ownerId, tree) },
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
      { event: 'ProposalApproved', proposal_id: proposalId, goal_id: goal.goalId, task_ids: taskIds },
      actor,
    );
  }
  return taskIds;
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
