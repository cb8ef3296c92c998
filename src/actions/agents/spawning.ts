import type { App } from '../../app.js';
import { proposalDecider } from '../../commands/proposals.js';
import { autoApprovable } from '../../commands/tiers.js';
import { type KnownTools } from '../../commands/tool-scope.js';
import { DomainError } from '../../errors.js';
import { proposalStream, type AgentSpec } from '../../events/proposals.js';
import { getTask } from '../../projections/task-queries.js';
import { getAgent } from '../../projections/principals.js';
import { sendToChannel } from '../channels.js';
import { agentIdOf, goalFor, who } from '../goals.js';
import { autoApprove } from '../proposals.js';
import { checkSpawn } from './materialize.js';
import { type Speaker } from '../../events/principals.js';
import { type CommandOptions } from '../../engine/handle.js';

/**
 * Spawning (SynapBus US3, DESIGN §3.1, §3.2, §3.9, §3.12): an agent proposes a child for a task of a
 * goal; the caps (spawn depth, delegation cap) and the name are checked before anything is written and
 * again when the owner approves, which creates the agent in the same command — config hash, token
 * (sealed, never shown in the log or a message), reputation seeded at 70 % of the parent's per domain —
 * and DMs the proposer the new agent's name and id.
 */
export interface Proposal {
  goalId: number;
  parentTaskId: number;
  agent: AgentSpec;
  reason: string;
}

/** `knownTools` (the tool registry's names; every MCP call gives them): the proposed scope is checked against them first. */
export function proposeAgent(
  app: App,
  by: Speaker,
  p: Proposal,
  actor: CommandOptions,
  knownTools?: KnownTools,
): { proposalId: number; approvalMessageId: number; agentId: number | null } {
  const parentId = agentIdOf(by);
  const parent = parentId === null ? null : getAgent(app.engine.db, parentId);
  if (!parent)
    throw new DomainError('ErrForbidden', 'only agents propose agents; owners create them with `colony agents create`');
  const result = app.engine.transact(actor, (uow) => {
    const goal = goalFor(app, by, p.goalId);
    const task = getTask(app.engine.db, p.parentTaskId);
    if (!task || task.goalId !== goal.goalId)
      throw new DomainError('ErrTaskNotFound', `task ${p.parentTaskId} is not a task of goal ${goal.goalId}`, {
        parent_task_id: p.parentTaskId,
      });
    checkSpawn(app, parent, goal, p.agent, knownTools);
    const proposalId = uow.ids.next('proposal');
    const sent = sendToChannel(
      app,
      by,
      { name: 'approvals' },
      {
        body: `Agent proposal #${proposalId} by ${by.name} for task #${task.taskId} "${task.title}" of goal #${goal.goalId}: spawn "${p.agent.name}" (${p.agent.tier}, ${p.agent.model}) with tools ${p.agent.toolScope.join(', ')}.\nReason: ${p.reason}\nReact approve or reject (metadata {"reason": "…"}).`,
        subject: `Spawn ${p.agent.name} for goal #${goal.goalId}`,
        priority: 7,
        replyTo: null,
        metadata: {
          kind: 'agent_proposal',
          proposal_id: proposalId,
          goal_id: goal.goalId,
          parent_task_id: task.taskId,
          name: p.agent.name,
          model: p.agent.model,
          autonomy_tier: p.agent.tier,
          tool_scope: p.agent.toolScope,
          skills: p.agent.skills,
          mcp_servers: p.agent.mcpServers,
          subagents: p.agent.subagents,
          system_prompt: p.agent.systemPrompt,
          reason: p.reason,
        },
      },
      actor,
    );
    app.engine.handle(
      proposalDecider,
      proposalStream(proposalId),
      {
        type: 'ProposeAgent',
        proposal: {
          proposalId,
          goalId: goal.goalId,
          ownerId: goal.ownerId,
          parentTaskId: task.taskId,
          proposer: { ...who(by), agentId: parent.agentId },
          agent: p.agent,
          reason: p.reason,
          messageId: sent.messageId,
          channelId: sent.channelId,
        },
        goalStatus: goal.status,
      },
      actor,
    );
    return {
      proposalId,
      approvalMessageId: sent.messageId,
      auto: autoApprovable(goal.approvalMode, 'agent', parent.tier),
    };
  });
  const v = result.value;
  if (!v) {
    const d = result.events.find((e) => e.type === 'AgentProposed')!.data as { proposalId: number; messageId: number };
    return { proposalId: d.proposalId, approvalMessageId: d.messageId, agentId: null };
  }
  if (!v.auto) return { proposalId: v.proposalId, approvalMessageId: v.approvalMessageId, agentId: null };
  const decided = autoApprove(app, by.tenant, v.proposalId, result.events[0]?.meta.commandId);
  return { proposalId: v.proposalId, approvalMessageId: v.approvalMessageId, agentId: decided.proposal.agentId };
}
