import {
  type CapabilityCatalog,
  CatalogInputError,
  orDefault,
  validatedBool,
  type CapabilityRecord,
  type CatalogField,
  type CatalogSummary,
} from './catalog.js';

/**
 * The four navigation answers (codomyrmex `agents/navigation/mcp_tools.py`), pure over a catalog
 * builder. Each takes the raw arguments — the MCP layer has already validated them, a direct caller may
 * not have — and returns codomyrmex's shapes: `{"status":"success",…}`, or `{"status":"error",
 * "error_code",…}` as an ordinary value (never a throw), so a caller can branch on `error_code`.
 */
export type BuildCatalog = (includeTools: boolean) => CapabilityCatalog;

export type NavigationErrorCode =
  | 'INVALID_KIND'
  | 'INVALID_QUERY'
  | 'INVALID_INPUT'
  | 'INVALID_CAPABILITY_ID'
  | 'CAPABILITY_NOT_FOUND'
  | 'CAPABILITY_ID_AMBIGUOUS';

export type NavigationError = {
  status: 'error';
  error_code: NavigationErrorCode;
  message: string;
  capability_id?: string;
  candidates?: string[];
  summary?: CatalogSummary;
};

// Type aliases, not interfaces: the tool layer checks them against zod's inferred (index-signed) types.
export type CapabilityPage = {
  status: 'success';
  capabilities: CapabilityRecord[];
  count: number;
  summary: CatalogSummary;
};
export type SearchPage = CapabilityPage & { query: string };
export type CapabilityFound = { status: 'success'; capability: CapabilityRecord };
export type OperabilityStatus = {
  status: 'success' | 'degraded';
  probe_policy: 'no live probes performed';
  implementation_present_agents: number;
  dispatchability_verified: false;
  verified_dispatchable_agents: 0;
  dispatchability_note: string;
  declared_agents: number;
  summary: CatalogSummary;
};

export interface ListArgs {
  kind?: unknown;
  limit?: unknown;
  include_tools?: unknown;
  include_unavailable?: unknown;
}
export interface SearchArgs extends ListArgs {
  query?: unknown;
}
export interface GetArgs {
  capability_id?: unknown;
  kind?: unknown;
  include_tools?: unknown;
}

const CODE_OF: Record<CatalogField, NavigationErrorCode> = {
  kind: 'INVALID_KIND',
  query: 'INVALID_QUERY',
  capability_id: 'INVALID_CAPABILITY_ID',
  limit: 'INVALID_INPUT',
  include_tools: 'INVALID_INPUT',
  include_unavailable: 'INVALID_INPUT',
};

export const DISPATCHABILITY_NOTE =
  'implementation metadata only; configuration, construction, and health remain unverified';

export function listAgentCapabilities(build: BuildCatalog, args: ListArgs = {}): CapabilityPage | NavigationError {
  return guarded(() => {
    const catalog = build(wantsTools(args.kind, args.include_tools));
    const capabilities = catalog.list(args);
    return { status: 'success', capabilities, count: capabilities.length, summary: catalog.summary() };
  });
}

export function searchAgentCapabilities(build: BuildCatalog, args: SearchArgs = {}): SearchPage | NavigationError {
  return guarded(() => {
    const catalog = build(wantsTools(args.kind, args.include_tools));
    const capabilities = catalog.search(args.query, args);
    return {
      status: 'success',
      query: args.query as string,
      capabilities,
      count: capabilities.length,
      summary: catalog.summary(),
    };
  });
}

export function getAgentCapability(build: BuildCatalog, args: GetArgs = {}): CapabilityFound | NavigationError {
  return guarded(() => {
    const id = args.capability_id;
    const toolId = typeof id === 'string' && id.trim().startsWith('tool:');
    const catalog = build(wantsTools(args.kind, args.include_tools) || toolId);
    const matches = catalog.find(id, { kind: args.kind });
    const shown = id as string;
    if (matches.length > 1) {
      const candidates = matches.map((r) => r.id);
      return {
        status: 'error' as const,
        error_code: 'CAPABILITY_ID_AMBIGUOUS' as const,
        capability_id: shown,
        candidates,
        summary: catalog.summary(),
        message: `'${shown}' names ${candidates.length} capabilities (${candidates.join(', ')}); pass one of these ids, or a kind`,
      };
    }
    const [record] = matches;
    if (!record) {
      return {
        status: 'error' as const,
        error_code: 'CAPABILITY_NOT_FOUND' as const,
        capability_id: shown,
        summary: catalog.summary(),
        message: `no capability with id or name '${shown.trim()}'${toolId || args.include_tools === true ? '' : ' (tool records need a tool: id or include_tools=true)'}; try search_agent_capabilities`,
      };
    }
    return { status: 'success', capability: record };
  });
}

/** Declared and implementation-present agents, from metadata only: nothing is constructed or probed. */
export function agentOperabilityStatus(
  build: BuildCatalog,
  args: { include_tools?: unknown } = {},
): OperabilityStatus | NavigationError {
  return guarded(() => {
    const catalog = build(validatedBool(orDefault(args.include_tools, false), 'include_tools'));
    const agents = catalog.all('agent');
    const summary = catalog.summary();
    return {
      status: summary.catalog_state === 'ready' ? 'success' : 'degraded',
      probe_policy: 'no live probes performed',
      implementation_present_agents: agents.filter((r) => r.status === 'implementation_present').length,
      dispatchability_verified: false,
      verified_dispatchable_agents: 0,
      dispatchability_note: DISPATCHABILITY_NOTE,
      declared_agents: agents.length,
      summary,
    };
  });
}

/** Tool records are opt-in; asking for kind "tool" opts in. */
function wantsTools(kind: unknown, includeTools: unknown): boolean {
  return validatedBool(orDefault(includeTools, false), 'include_tools') || kind === 'tool';
}

function guarded<T>(answer: () => T): T | NavigationError {
  try {
    return answer();
  } catch (e) {
    if (!(e instanceof CatalogInputError)) throw e;
    return { status: 'error', error_code: CODE_OF[e.field], message: e.message };
  }
}
