import * as z from 'zod';
import { listAgents } from '../../projections/principal-queries.js';
import { visibleTools } from '../views/visible-tools.js';
import { type CAPABILITY_KINDS, MAX_LIMIT } from '../catalog.js';
import {
  agentOperabilityStatus,
  getAgentCapability,
  listAgentCapabilities,
  searchAgentCapabilities,
  type BuildCatalog,
} from '../catalog-queries.js';
import { buildColonyCatalog, REPO_ROOT } from '../catalog-sources.js';
import { defineTool, type AnyTool, type ToolContext } from '../tool.js';

/**
 * codomyrmex's capability-navigation tools over Colony's own catalog (src/mcp/catalog.ts): the caller's
 * owner's agents, the src/ modules, and — on request — the MCP tools the caller can see. Read-only
 * metadata. Results keep codomyrmex's shapes: `{"status":"success",…}`, and for bad input or a failed
 * lookup `{"status":"error","error_code",…}` as a normal (not isError) result. Arguments that fail the
 * schema (a wrong type, an unknown kind, an unknown key) are refused before the handler, as ErrInvalidInput.
 */
const Kind = z.enum(['agent', 'module', 'tool'] satisfies typeof CAPABILITY_KINDS);

const kind = Kind.nullable()
  .optional()
  .describe(
    'Only records of this kind: "agent" (your team\'s agents), "module" (Colony source modules), "tool" (MCP tools; implies include_tools)',
  );
const limit = (dflt: number) =>
  z.number().int().default(dflt).describe(`Most records to return; clamped to [1, ${MAX_LIMIT}] (0 returns one)`);
const includeTools = z
  .boolean()
  .default(false)
  .describe('Also catalog the MCP tools you can see (with their input schemas); off by default');
const includeUnavailable = z
  .boolean()
  .default(false)
  .describe('Also return records whose status is "unavailable" (e.g. quarantined agents)');

const CapabilityRecord = z.object({
  id: z.string().describe('Stable id: agent:<name>, module:<name> or tool:<name>'),
  kind: Kind,
  name: z.string(),
  display_name: z.string(),
  description: z.string(),
  status: z.string().describe('available | implementation_present | declared | unavailable'),
  source: z.string(),
  documentation: z.string().nullable(),
  provenance: z.record(z.string(), z.unknown()),
  trust: z
    .string()
    .describe('Descriptive only, grants nothing: execution (agents), read_only, restricted (tools that change state)'),
  tags: z.array(z.string()),
  details: z.record(z.string(), z.unknown()),
});

const Summary = z.object({
  count: z.number().int(),
  catalog_state: z.enum(['ready', 'empty', 'degraded']),
  by_kind: z.record(z.string(), z.number().int()),
  by_status: z.record(z.string(), z.number().int()),
  errors: z.array(z.string()),
  provenance: z.record(z.string(), z.unknown()),
});

/** codomyrmex's error fields, present when status is "error". */
const errorFields = {
  error_code: z
    .enum([
      'INVALID_KIND',
      'INVALID_QUERY',
      'INVALID_INPUT',
      'INVALID_CAPABILITY_ID',
      'CAPABILITY_NOT_FOUND',
      'CAPABILITY_ID_AMBIGUOUS',
    ])
    .optional(),
  message: z.string().optional(),
};

const Page = z.looseObject({
  status: z.enum(['success', 'error']),
  capabilities: z.array(CapabilityRecord).optional(),
  count: z.number().int().optional(),
  summary: Summary.optional(),
  ...errorFields,
});

const common = { trust: 'read', surface: 'agent', module: 'mcp' } as const;

const list = defineTool({
  ...common,
  name: 'list_agent_capabilities',
  title: 'List agent capabilities',
  description:
    'Lists the capability catalog: your team\'s agents (agent:<name>), Colony\'s source modules (module:<name>) and, with include_tools or kind "tool", the MCP tools you can call (tool:<name>, with input schemas). Records are sorted by kind, name, id; metadata only — nothing is started or probed, and "implementation_present" on an agent only means a backend command is registered. Returns {"status":"success","capabilities","count","summary"}; bad input returns {"status":"error","error_code":"INVALID_KIND"|"INVALID_INPUT","message"}.',
  input: z.strictObject({
    kind,
    limit: limit(100),
    include_tools: includeTools,
    include_unavailable: includeUnavailable,
  }),
  output: Page,
  handler: (ctx, args) => listAgentCapabilities(catalogFor(ctx), args),
});

const search = defineTool({
  ...common,
  name: 'search_agent_capabilities',
  title: 'Search agent capabilities',
  description:
    'Searches the whole capability catalog (not just the first page) for agents, modules and — with include_tools or kind "tool" — tools. Each query word scores +12 when it equals a record\'s name or id, +8 when the name starts with it, +3 when it appears in the id, name, description, source, documentation or tags; best first. Use it to find which agent or tool handles a job, then get_agent_capability for the full record. Returns {"status":"success","query","capabilities","count","summary"}; a blank query or one without letters or digits returns {"status":"error","error_code":"INVALID_QUERY","message"} (it never falls back to a listing).',
  input: z.strictObject({
    query: z.string().describe('Words to look for (letters, digits, _ : -), e.g. "reviewer" or "tool:whoami"'),
    kind,
    limit: limit(20),
    include_tools: includeTools,
    include_unavailable: includeUnavailable,
  }),
  output: Page.extend({ query: z.string().optional() }),
  handler: (ctx, args) => searchAgentCapabilities(catalogFor(ctx), args),
});

const get = defineTool({
  ...common,
  name: 'get_agent_capability',
  title: 'Get one agent capability',
  description:
    'Returns one capability record by its id (agent:<name>, module:<name>, tool:<name>) or by a bare name when only one record has it; a tool: id includes tools automatically. Returns {"status":"success","capability"}. Errors (as results with "status":"error"): CAPABILITY_NOT_FOUND, CAPABILITY_ID_AMBIGUOUS (a bare name shared by several kinds — "candidates" lists their ids; pass one, or a kind), INVALID_CAPABILITY_ID (blank id).',
  input: z.strictObject({
    capability_id: z.string().describe('An id such as "agent:reviewer" or "tool:whoami", or a bare name such as "mcp"'),
    kind,
    include_tools: includeTools,
  }),
  output: z.looseObject({
    status: z.enum(['success', 'error']),
    capability: CapabilityRecord.optional(),
    capability_id: z.string().optional(),
    candidates: z.array(z.string()).optional(),
    summary: Summary.optional(),
    ...errorFields,
  }),
  handler: (ctx, args) => getAgentCapability(catalogFor(ctx), args),
});

const operability = defineTool({
  ...common,
  name: 'agent_operability_status',
  title: 'Agent operability status',
  description:
    'Reports, from registry metadata only, how many of your team\'s agents are declared and how many have a backend command registered (implementation_present_agents). No agent is started or probed, so dispatchability_verified is always false and verified_dispatchable_agents 0. "status" is "success" when the catalog is ready, "degraded" when it is empty or a source failed (see summary.errors).',
  input: z.strictObject({ include_tools: includeTools }),
  output: z.looseObject({
    status: z.enum(['success', 'degraded', 'error']),
    probe_policy: z.string().optional(),
    implementation_present_agents: z.number().int().optional(),
    dispatchability_verified: z.boolean().optional(),
    verified_dispatchable_agents: z.number().int().optional(),
    dispatchability_note: z.string().optional(),
    declared_agents: z.number().int().optional(),
    summary: Summary.optional(),
    ...errorFields,
  }),
  handler: (ctx, args) => agentOperabilityStatus(catalogFor(ctx), args),
});

/** The catalog as this caller sees it: its owner's agents, and only the tools it could list. */
function catalogFor(ctx: ToolContext): BuildCatalog {
  const ownerId = ctx.caller.kind === 'owner' ? ctx.caller.userId : ctx.caller.ownerId;
  const tools = visibleTools(ctx, ctx.caller);
  return (includeTools) =>
    buildColonyCatalog({ agents: () => listAgents(ctx.app.engine.db, ownerId), tools, root: REPO_ROOT }, includeTools);
}

export const capabilityTools: readonly AnyTool[] = [list, search, get, operability];
