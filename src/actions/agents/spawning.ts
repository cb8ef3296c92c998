import type { App } from '../../app.js';
import { quoted } from '../../commands/proposal-card.js';
import { proposalDecider } from '../../commands/proposals.js';
import { autoApprovable } from '../../commands/tiers.js';
import { type KnownTools } from '../../commands/tool-scope.js';
import { DomainError } from '../../errors.js';
import { proposalStream, type AgentSpec } from '../../events/proposals.js';
import { getTask, type TaskRow } from '../../projections/task-queries.js';
import { type GoalRow } from '../../projections/goal-queries.js';
import { getAgent } from '../../projections/principal-queries.js';
import { postApprovalCard, type Message } from '../channels.js';
import { agentIdOf, goalFor, who } from '../goals.js';
import { autoApprove } from '../proposals/decide.js';
import { spawnFacts } from './materialize.js';
import { type Speaker } from '../../events/principals.js';
import { type CommandOptions } from '../../engine/handle.js';
import { oneLine } from '../../terminal.js';

/**
 * Spawning: an agent proposes a child for a task of a goal. The proposal decider decides whether it may
 * (only agents propose agents, within their caps and with a free name, on a goal that runs: commands/
 * proposal-spawn.ts) when it is made and again when the owner approves, which creates the agent in the
 * same command — config hash, token (sealed, never shown in the log or a message), reputation seeded at
 * 70 % of the parent's per domain — and DMs the proposer the new agent's name and id.
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
  const result = app.engine.transact(actor, (uow) => {
    const goal = goalFor(app, by, p.goalId);
    const task = getTask(app.engine.db, p.parentTaskId);
    if (!task || task.goalId !== goal.goalId)
      throw new DomainError('ErrTaskNotFound', `task ${p.parentTaskId} is not a task of goal ${goal.goalId}`, {
        parent_task_id: p.parentTaskId,
      });
    const parent = parentId === null ? null : getAgent(app.engine.db, parentId);
    const proposalId = uow.ids.next('proposal');
    const sent = postApprovalCard(app, by, approvalMessage(by, proposalId, goal, task, p), actor);
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
          // An owner's proposal is refused by the decider before it could be recorded with this id.
          proposer: { ...who(by), agentId: parentId ?? 0 },
          agent: p.agent,
          reason: p.reason,
          messageId: sent.messageId,
          channelId: sent.channelId,
        },
        goalStatus: goal.status,
        spawn: spawnFacts(app, parent, goal, p.agent.name, knownTools),
      },
      actor,
    );
    return {
      proposalId,
      approvalMessageId: sent.messageId,
      auto: autoApprovable(goal.approvalMode, 'agent', parent!.tier),
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

/** The `#approvals` message of a spawn proposal: what it asks for, and how to decide it. */
function approvalMessage(by: Speaker, proposalId: number, goal: GoalRow, task: TaskRow, p: Proposal): Message {
  return {
    // The proposer's words cannot fake a line of the card: one escaped line each, the reason quoted.
    body: `Agent proposal #${proposalId} by ${oneLine(by.name)} for task #${task.taskId} "${oneLine(task.title)}" of goal #${goal.goalId}: spawn "${oneLine(p.agent.name)}" (${p.agent.tier}, ${oneLine(p.agent.model)}) with tools ${p.agent.toolScope.map(oneLine).join(', ')}.\n${quoted(`Reason (${oneLine(by.name)}'s words):`, p.reason)}\nReact approve or reject (metadata {"reason": "…"}).`,
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
  };
}
