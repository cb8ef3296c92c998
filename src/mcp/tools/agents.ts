import * as z from 'zod';
import { reputationOf, unquarantineAgent } from '../../actions/reputation.js';
import { proposeAgent } from '../../actions/agents/spawning.js';
import { updateAgent } from '../../actions/agents.js';
import { getAgent } from '../../projections/principal-queries.js';
import { DomainError } from '../../errors.js';
import { defineTool, type AnyTool } from '../tool.js';
import { actorOf } from '../auth.js';
import { speaker } from '../../events/principals.js';

/** Agents: propose_agent (spawning under the caps) and the owner's unquarantine_agent. */
const McpServers = z
  .array(
    z.strictObject({
      name: z.string().min(1).max(100),
      url: z.string().min(1).max(2000),
      transport: z.string().min(1).max(50),
    }),
  )
  .max(50);

interface ConfigArgs {
  model?: unknown;
  system_prompt?: unknown;
  tool_scope?: unknown;
  skills?: unknown;
  mcp_servers?: unknown;
  subagents?: unknown;
  autonomy_tier?: unknown;
}
/** An agent's config as the tools take it (snake_case) and as the actions name it. */
const configOf = <A extends ConfigArgs>(a: A) => ({
  model: a.model as A['model'],
  systemPrompt: a.system_prompt as A['system_prompt'],
  toolScope: a.tool_scope as A['tool_scope'],
  skills: a.skills as A['skills'],
  mcpServers: a.mcp_servers as A['mcp_servers'],
  subagents: a.subagents as A['subagents'],
  tier: a.autonomy_tier as A['autonomy_tier'],
});

const propose = defineTool({
  name: 'propose_agent',
  title: 'Propose an agent',
  description:
    "Proposes spawning a specialist sub-agent of yours for a task of a goal. Checked before anything is written, in this order: its tool scope must name only agent tools that exist (ErrInvalidInput, naming the closest tool for a typo), its spawn depth (yours + 1) must not exceed the goal's max_spawn_depth (ErrSpawnDepthExceeded), its autonomy tier and tool scope must not exceed yours (ErrDelegationCapExceeded, every violation listed in details.violations), and its name must be free (ErrAgentNameTaken). The proposal goes to #approvals; on the owner's approval (at once in auto mode when you are autonomous: an assisted or supervised agent's spawns always wait for the owner) the agent is created and you get a DM with its name and id. Errors also: ErrGoalNotFound, ErrTaskNotFound, ErrInvalidInput.",
  trust: 'write',
  surface: 'agent',
  module: 'agents',
  input: z.strictObject({
    goal_id: z.number().int().positive(),
    parent_task_id: z.number().int().positive(),
    name: z
      .string()
      .min(3)
      .max(64)
      .regex(/^[a-z][a-z0-9-]*$/, 'lowercase letter first, then a-z, 0-9 or -'),
    model: z.string().trim().min(1).max(200),
    system_prompt: z.string().min(20).max(16_000),
    tool_scope: z.array(z.string().min(1).max(100)).min(1).max(200),
    skills: z.array(z.string().min(1).max(200)).max(100).default([]),
    mcp_servers: McpServers.default([]),
    subagents: z.array(z.string().min(1).max(100)).max(100).default([]),
    autonomy_tier: z.enum(['supervised', 'assisted', 'autonomous']),
    reason: z.string().trim().min(10).max(4000),
  }),
  output: z.object({
    proposal_id: z.number().int(),
    approval_message_id: z.number().int(),
    status: z.enum(['pending', 'approved']),
    agent_id: z.number().int().nullable(),
  }),
  handler(ctx, a) {
    const r = proposeAgent(
      ctx.app,
      speaker(ctx.caller),
      {
        goalId: a.goal_id,
        parentTaskId: a.parent_task_id,
        reason: a.reason,
        agent: { name: a.name, ...configOf(a) },
      },
      ctx.command,
      ctx.tools.known(),
    );
    return {
      proposal_id: r.proposalId,
      approval_message_id: r.approvalMessageId,
      status: r.agentId === null ? ('pending' as const) : ('approved' as const),
      agent_id: r.agentId,
    };
  },
});

const unquarantine = defineTool({
  name: 'unquarantine_agent',
  title: 'Lift a quarantine',
  description:
    'Owner only. Lifts the quarantine of one of your agents (quarantined when the mean of its domain reputation scores fell below the threshold): it may claim tasks and call its write tools again. Its reputation is unchanged, so the next bad verdict may quarantine it again. Errors: ErrNotFound.',
  trust: 'write',
  surface: 'owner',
  module: 'agents',
  input: z.strictObject({ agent_id: z.number().int().positive() }),
  output: z.object({
    agent_id: z.number().int(),
    status: z.enum(['active', 'quarantined']),
    rolling_score: z.number(),
  }),
  handler(ctx, a) {
    if (ctx.caller.kind !== 'owner') throw new DomainError('ErrForbidden', 'only owners lift quarantines');
    const agent = unquarantineAgent(ctx.app, ctx.caller.userId, a.agent_id, actorOf(ctx.caller), ctx.command);
    return {
      agent_id: agent.agentId,
      status: agent.quarantined ? ('quarantined' as const) : ('active' as const),
      rolling_score: reputationOf(ctx.app, agent).rollingScore,
    };
  },
});

const update = defineTool({
  name: 'update_agent',
  title: 'Update an agent',
  description:
    "Owner only. Changes an agent's model, system prompt, tool scope, skills, MCP servers, subagents, autonomy tier or command. A change of any of the first six gives it a new config hash, whose reputation starts at 70 % of the old hash's score in each domain; evidence earned under the old config stays with the old hash. A tool scope may name only agent-surface tools (an unknown name or an owner tool is ErrInvalidInput). Errors: ErrNotFound, ErrInvalidInput.",
  trust: 'write',
  surface: 'owner',
  module: 'agents',
  input: z.strictObject({
    agent_id: z.number().int().positive(),
    model: z.string().trim().min(1).max(200).optional(),
    system_prompt: z.string().min(20).max(16_000).optional(),
    tool_scope: z.array(z.string().min(1).max(100)).min(1).max(200).optional(),
    skills: z.array(z.string().min(1).max(200)).max(100).optional(),
    mcp_servers: McpServers.optional(),
    subagents: z.array(z.string().min(1).max(100)).max(100).optional(),
    autonomy_tier: z.enum(['supervised', 'assisted', 'autonomous']).optional(),
  }),
  output: z.object({
    agent_id: z.number().int(),
    config_hash: z.string(),
    previous_hash: z.string(),
    hash_changed: z.boolean(),
    rolling_score: z.number(),
  }),
  handler(ctx, a) {
    if (ctx.caller.kind !== 'owner') throw new DomainError('ErrForbidden', 'only owners update agents');
    const before = getAgent(ctx.app.engine.db, a.agent_id);
    const { agent, hashChanged } = updateAgent(
      ctx.app,
      ctx.caller.userId,
      a.agent_id,
      configOf(a),
      ctx.command,
      ctx.tools.known(),
    );
    return {
      agent_id: agent.agentId,
      config_hash: agent.configHash,
      previous_hash: before!.configHash,
      hash_changed: hashChanged,
      rolling_score: reputationOf(ctx.app, agent).rollingScore,
    };
  },
});

export const agentTools: readonly AnyTool[] = [propose, update, unquarantine];
