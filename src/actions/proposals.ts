import type { App } from '../app.js';
import { proposalDecider } from '../commands/proposals.js';
import { treeCard } from '../commands/proposal-card.js';
import { autoApprovable } from '../commands/tiers.js';
import { proposalStream, type TreeNode, type TreeRequest } from '../events/proposals.js';
import { getAgent } from '../projections/principal-queries.js';
import { getProposal } from '../projections/proposal-queries.js';
import { type GoalRow } from '../projections/goal-queries.js';
import { postApprovalCard, type Message } from './channels.js';
import { agentIdOf, goalFor, who } from './goals.js';
import { autoApprove } from './proposals/decide.js';
import { treeAsProposed, treeFacts } from './proposals/tree-facts.js';
import { type Speaker } from '../events/principals.js';
import { tripsOnCycle } from './tasks/blockers.js';
import { checkTreeTimers } from './breakers/wake-cap.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * Task-tree proposals: posted to `#approvals` with the whole tree, decided once by the goal's owner
 * (a reaction, `colony approve|reject`, or at once by `system` in auto mode: proposals/decide.ts).
 * Approval materializes every task, decides the proposal and activates the goal in one command: all of
 * it or none of it. What may be proposed is the proposal decider's to say (commands/proposal-tree.ts);
 * this function reads its facts, posts the card and routes.
 */
export { autoApprove, decideProposal, type Decided } from './proposals/decide.js';
export { proposalDecidedBy, reactTo } from './proposals/react.js';

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
  // A tree whose blockers close a cycle is refused; an agent proposing one trips its breaker on the goal.
  const result = tripsOnCycle(app, by, goalId, actor, () => proposeOnce(app, by, goalId, reasoning, request, actor));
  const p = result.value ?? fromEvents(result.events);
  if (!p.auto || getProposal(app.engine.db, p.proposalId)?.status !== 'pending') {
    return { ...p, approved: getProposal(app.engine.db, p.proposalId)?.status === 'approved', taskIds: [] };
  }
  const decided = autoApprove(app, by.tenant, p.proposalId, result.events[0]?.meta.commandId);
  return { ...p, approved: true, taskIds: decided.taskIds };
}

function proposeOnce(
  app: App,
  by: Speaker,
  goalId: number,
  reasoning: string,
  request: TreeRequest,
  actor: CommandOptions,
) {
  return app.engine.transact(actor, (uow) => {
    const goal = goalFor(app, by, goalId);
    checkTreeTimers(app.engine.db, goal.ownerId, request);
    const proposer = agentIdOf(by);
    const facts = treeFacts(app, goal, proposer, request);
    const proposalId = uow.ids.next('proposal');
    const card = cardMessage(goal, proposalId, by.name, reasoning, treeAsProposed(request, facts.recipes));
    const sent = postApprovalCard(app, by, card, actor);
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
          messageId: sent.messageId,
          channelId: sent.channelId,
        },
        request,
        facts,
      },
      actor,
    );
    const tier = proposer === null ? null : (getAgent(app.engine.db, proposer)?.tier ?? null);
    return {
      proposalId,
      proposalMessageId: sent.messageId,
      channelId: sent.channelId,
      auto: autoApprovable(goal.approvalMode, 'task_tree', tier),
    };
  });
}

/** The proposal's card in `#approvals`, with the whole tree in its metadata. */
function cardMessage(
  goal: GoalRow,
  proposalId: number,
  proposer: string,
  reasoning: string,
  { tree, count }: { tree: TreeNode; count: number },
): Message {
  const { goalId, title } = goal;
  const card = treeCard({ goalId, goalTitle: title, proposalId, proposer, reasoning, tree, taskCount: count });
  return {
    body: card.body,
    subject: `Task tree for goal #${goalId}: ${title}`,
    priority: 7,
    metadata: { kind: 'task_proposal', proposal_id: proposalId, goal_id: goalId, task_count: count, tree, reasoning },
    replyTo: null,
  };
}

/** A retried proposal (same idempotency key) answers with the proposal its first call made. */
function fromEvents(events: readonly { type: string; data: unknown }[]) {
  const d = events.find((e) => e.type === 'TaskTreeProposed')!.data as {
    proposalId: number;
    messageId: number;
    channelId: number;
  };
  return { proposalId: d.proposalId, proposalMessageId: d.messageId, channelId: d.channelId, auto: false };
}
