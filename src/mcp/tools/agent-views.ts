import * as z from 'zod';
import { inbox } from '../../projections/channel-queries.js';
import { listAgents } from '../../projections/principal-queries.js';
import { listAgentViews, lookupAgent, type AgentView, type Readable } from '../../projections/session-queries.js';
import { defineTool, type AnyTool, type ToolContext } from '../tool.js';
import { AgentDetail, agentDetailText, AgentList, agentListText, NOT_APPLICABLE } from './agent-text.js';
import { NO_PROJECT } from '../views/session-text.js';
import { readableBy } from '../views/readable.js';
import { speaker } from '../../events/principals.js';

/**
 * Agent views: xylocopa's agent_list and agent_get with their texts (agent-text.ts) and codomyrmex's
 * list_agents — the caller's team (its tenant) only. execute_agent is in execute.ts.
 */
const common = { trust: 'read', surface: 'agent', module: 'agents' } as const;
const tenantOf = (ctx: ToolContext): number => speaker(ctx.caller).tenant;

/** The preview is the start of its transcript's last message: shown only to those who may read the transcript (sessions.ts). */
const summary = (a: AgentView, readable: Readable) => ({
  agent_id: a.agentId,
  name: a.name,
  status: a.status.toUpperCase(),
  project: a.project ?? NO_PROJECT,
  session_id: a.lastSessionId,
  model: a.model,
  effort: NOT_APPLICABLE,
  preview: readable === null || readable.includes(a.agentId) ? (a.preview ?? '') : PRIVATE,
});
const PRIVATE = '(private: only the agent, the agents that spawned it and the owner read its sessions)';

const list = defineTool({
  ...common,
  name: 'agent_list',
  title: 'List agents',
  description:
    'Lists your team\'s agents, most recently active first: name, runtime status (IDLE, EXECUTING, ERROR, STOPPED), project, id, latest session, model, last activity and a preview of the last message. Filters: status (case-insensitive), project (by name); limit is clamped to 1–100. Answers "No agents found." when none match.',
  input: z.strictObject({
    project: z.string().max(200).default('').describe('Only agents of this project (by name)'),
    status: z.string().max(50).default('').describe('IDLE, EXECUTING, ERROR or STOPPED, any case; empty for all'),
    limit: z.number().int().default(30).describe('Most agents to list; clamped to 1–100'),
  }),
  output: AgentList,
  handler(ctx, a) {
    const limit = Math.min(100, Math.max(1, a.limit));
    const rows = listAgentViews(ctx.app.engine.db, tenantOf(ctx), {
      status: a.status.trim() ? a.status : null,
      limit,
      project: a.project || null,
    });
    const readable = readableBy(ctx);
    return {
      filters: { project: a.project, status: a.status },
      count: rows.length,
      agents: rows.map((r) => ({ ...summary(r, readable), last_activity_at: r.lastMessageAt ?? r.createdAt })),
    };
  },
  text: agentListText,
});

const get = defineTool({
  ...common,
  name: 'agent_get',
  title: 'Get an agent',
  description:
    'Shows one of your team\'s agents in detail: status, latest session, model, the task of its latest run, parent (for spawned agents), unread direct messages, when it was created and last active, and a preview of its last message. agent_id may be an agent id or name, a session id (that session\'s agent), or a prefix of a session id or of a name (the most recently active match). Answers "No agent found matching: X" when nothing matches.',
  input: z.strictObject({
    agent_id: z.string().max(200).describe('Agent id or name, session id, or a prefix of a session id or name'),
  }),
  output: AgentDetail,
  handler(ctx, a) {
    const found = lookupAgent(ctx.app.engine.db, tenantOf(ctx), a.agent_id);
    if (!found) return { identifier: a.agent_id, found: false, agent: null };
    const v = found.agent;
    return {
      identifier: a.agent_id,
      found: true,
      agent: {
        ...summary(v, readableBy(ctx)),
        mode: 'AUTO' as const,
        branch: NOT_APPLICABLE,
        worktree: NOT_APPLICABLE,
        tmux_pane: NOT_APPLICABLE,
        task_id: v.taskId,
        parent_id: v.parentId,
        is_subagent: v.parentId !== null,
        unread: unreadOf(ctx, v),
        muted: false,
        pending_suggestions: false,
        created_at: v.createdAt,
        last_message_at: v.lastMessageAt,
      },
    };
  },
  text: agentDetailText,
});

/** Its unread direct messages: one count over the inbox projection (the same rule read_inbox uses). */
const unreadOf = (ctx: ToolContext, v: AgentView): number =>
  inbox(
    ctx.app.engine.db,
    { key: `agent-${v.agentId}`, tenant: v.ownerId, name: v.name },
    { includeRead: false, minPriority: 0, fromName: null, limit: 0 },
  ).total;

const Descriptor = z.object({
  name: z.string(),
  display_name: z.string(),
  agent_type: z.enum(['api', 'cli', 'local']),
  env_var: z.string().nullable(),
  config_key: z.string(),
  default_model: z.string(),
  client_path: z.string().nullable(),
});

const registry = defineTool({
  ...common,
  name: 'list_agents',
  title: 'List agent descriptors',
  description:
    'Lists your team\'s agents as codomyrmex agent descriptors, by id: {"status":"success","agents":[{"name","display_name","agent_type" ("cli": it has a backend command Colony runs; "api": it has none and works through MCP),"env_var" (null),"config_key" (its name),"default_model","client_path" (null)}],"count"}. Use a name with execute_agent.',
  input: z.strictObject({}),
  output: z.object({ status: z.literal('success'), agents: z.array(Descriptor), count: z.number().int() }),
  handler(ctx) {
    const agents = listAgents(ctx.app.engine.db, tenantOf(ctx)).map((a) => ({
      name: a.name,
      display_name: a.name,
      agent_type: a.runnable ? ('cli' as const) : ('api' as const),
      env_var: null,
      config_key: a.name,
      default_model: a.model,
      client_path: null,
    }));
    return { status: 'success' as const, agents, count: agents.length };
  },
});

export const agentViewTools: readonly AnyTool[] = [list, get, registry];
