import type { App } from '../app.js';
import { DomainError } from '../errors.js';
import { getAgentByName, type AgentRow } from '../projections/principal-queries.js';
import { registerAgent } from './principals.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * The pre-built coordinator: one per owner, named `coordinator`, created the first time
 * a goal asks for the `default` template. Its token is sealed like every agent's, so Colony can start
 * it; the owner reveals or rotates it from the CLI.
 */
export const COORDINATOR_NAME = 'coordinator';
export const COORDINATOR_MODEL = 'gemini-2.5-flash';
// claim_task, complete_task and report_usage: it closes parents when their children are done (children_done), and
// the agents it spawns can only get tools it has itself (the delegation cap) — workers need these three; verify_task
// likewise for the peer verifiers it spawns.
export const COORDINATOR_TOOLS = [
  'create_goal',
  'propose_task_tree',
  'propose_agent',
  'request_resource',
  'list_resources',
  'my_status',
  'send_message',
  'search_messages',
  'get_goal',
  'list_goals',
  'complete_goal',
  'get_channel_messages',
  'read_inbox',
  'list_verifiers',
  'claim_task',
  'complete_task',
  'report_usage',
  'verify_task',
  'set_task_blockers',
];

export const COORDINATOR_PROMPT = `You are the coordinator of a Colony goal. Your job is to get the goal done through other agents:
decompose it, propose task trees and specialist spawns, monitor progress and iterate. You never work on leaf tasks
yourself; you close parent tasks once their children are done.

Tools you may call: create_goal, propose_task_tree, propose_agent, request_resource, list_resources, my_status,
send_message, search_messages, get_goal, list_goals, complete_goal, get_channel_messages, read_inbox, list_verifiers,
claim_task, complete_task, report_usage, verify_task, set_task_blockers.

How to work:
1. Call my_status first, then get_goal to see the goal, its task tree, its spend and its recent events.
2. If the goal has no approved tree and no pending proposal, call propose_task_tree once with the whole tree:
   {"goal_id": N, "reasoning": "why this decomposition", "tree": {"title": "3-200 chars", "description": "at least 10 chars",
    "acceptance_criteria": "how a verifier knows it is done", "billing_code": "area-of-work",
    "budget_tokens": 0, "budget_dollars_cents": 0,
    "verifier_config": {"kind": "auto"} | {"kind": "peer", "agent_id": N} | {"kind": "command", "recipe": "NAME", "cwd": "..."},
    "blocked_by_nodes": ["tree.children[0]"], "children": [ ...the same shape... ]}}
   blocked_by_nodes lists the other nodes of the tree a task must wait for (by path: "tree", "tree.children[0]", …);
   blocked_by lists ids of the goal's existing tasks. Blockers never form a cycle (ErrDependencyCycle, which pauses you).
   A command verifier runs one of the owner's verifier recipes, by name (list_verifiers shows them); you never write a
   command. A peer verifier must be independent of the work: not you and not an agent you spawned.
   A child's budget must fit in what its parent has left. The owner approves or rejects it; a rejection arrives as a
   direct message with the reason — revise and propose again.
3. For leaves no existing agent can do, call propose_agent with a name (^[a-z][a-z0-9-]*$), model, a system prompt of at
   least 20 characters, a tool scope, an autonomy tier and a reason. Never propose a child whose tools or tier exceed
   your own, and never beyond the goal's max spawn depth.
4. When an agent needs a credential, it calls request_resource; you never handle secret values.
5. Post progress to the goal channel (send_message with channel "goal-<slug>"), not in direct messages.
6. When a verification fails you get a direct message: re-plan the task, or call complete_goal with status "stuck" and
   the reason.
7. When every child of a parent task is done you are offered the parent: claim_task it, then complete_task it with a
   summary that rolls up its children's. When the root is done, call complete_goal with status "completed" and a summary.
   Give the agents you spawn claim_task, complete_task and report_usage so they can work on leaves.`;

/** The coordinator a goal's `coordinator_config` names: `default` (created on first use) or an agent of the owner. */
export function resolveCoordinator(
  app: App,
  ownerId: number,
  template: string,
  by: CommandOptions,
): AgentRow | { agentId: number; name: string } {
  if (template === 'default') {
    const existing = getAgentByName(app.engine.db, ownerId, COORDINATOR_NAME);
    if (existing) return existing;
    const made = registerAgent(
      app,
      {
        name: COORDINATOR_NAME,
        ownerId,
        model: COORDINATOR_MODEL,
        systemPrompt: COORDINATOR_PROMPT,
        toolScope: [...COORDINATOR_TOOLS].sort(),
        tier: 'assisted',
        command: null,
        parentId: null,
        spawnDepth: 0,
      },
      by,
    );
    return { agentId: made.agentId, name: made.name };
  }
  const agent = getAgentByName(app.engine.db, ownerId, template);
  if (!agent) {
    throw new DomainError(
      'ErrNotFound',
      `coordinator_config "${template}" names no coordinator template or agent of yours (use "default")`,
      { coordinator_config: template },
    );
  }
  return agent;
}
