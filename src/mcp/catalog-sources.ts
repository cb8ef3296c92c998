import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentRow } from '../projections/principal-queries.js';
import { CapabilityCatalog, compareStrings, type CapabilityRecord } from './catalog.js';
import { inputJsonSchema } from './results.js';
import type { AnyTool } from './tool.js';

/**
 * Colony's sources for the capability catalog (catalog.ts): the owner's registered agents, the
 * top-level folders of `src/`, and the MCP tools the caller can see. Metadata only — no agent is started,
 * no tool handler runs. Paths in records are always repo-relative; no system prompt, backend command line
 * or token ever enters a record. Each source fails soft: what it could build is kept, its error is listed.
 */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CatalogSources {
  /** The caller's owner's agents (read lazily, so a failing read becomes a catalog error). */
  agents(): readonly AgentRow[];
  /** The tools the caller may see (an agent sees agent-surface tools only). */
  tools: readonly AnyTool[];
  /** The checkout (or package) root holding `src/` and `test/`. */
  root: string;
}

export const SOURCE_NAMES = {
  agents: 'agent_registry',
  modules: 'package_filesystem',
  tools: 'mcp_tool_registry',
} as const;

export function buildColonyCatalog(sources: CatalogSources, includeTools: boolean): CapabilityCatalog {
  const errors: string[] = [];
  const records: CapabilityRecord[] = [];
  try {
    records.push(...sources.agents().map(agentRecord));
  } catch (e) {
    errors.push(`agents: ${describe(e)}`);
  }
  records.push(...moduleRecords(sources.root, sources.tools, errors));
  if (includeTools) {
    for (const tool of sources.tools) {
      try {
        records.push(toolRecord(tool, sources.root));
      } catch (e) {
        errors.push(`tool:${tool.name}: ${describe(e)}`);
      }
    }
  }
  const names = [SOURCE_NAMES.agents, SOURCE_NAMES.modules, ...(includeTools ? [SOURCE_NAMES.tools] : [])];
  return new CapabilityCatalog(records, errors, {
    schema_version: 1,
    mode: 'metadata_only',
    live_probes_performed: false,
    tool_discovery_requested: includeTools,
    sources: names,
  });
}

/** `implementation_present` means only that a backend command is registered — not that it starts or works. */
export function agentRecord(a: AgentRow): CapabilityRecord {
  const hasCommand = a.command !== null && a.command.trim() !== '';
  return {
    id: `agent:${a.name}`,
    kind: 'agent',
    name: a.name,
    display_name: a.name,
    description: `${a.tier} agent using ${a.model}; registry metadata only; construction and health are unverified`,
    status: a.quarantined ? 'unavailable' : hasCommand ? 'implementation_present' : 'declared',
    source: 'agent registry',
    documentation: null,
    provenance: {
      discovered_by: SOURCE_NAMES.agents,
      source_path: 'agent registry',
      stream: `agent-${a.agentId}`,
      metadata_only: true,
    },
    trust: 'execution',
    tags: [a.tier, 'agent', 'dispatch', ...(a.quarantined ? ['quarantined'] : [])],
    details: {
      agent_id: a.agentId,
      tier: a.tier,
      model: a.model,
      tool_scope: [...a.toolScope],
      command_present: hasCommand,
      runtime_status: a.status,
      quarantined: a.quarantined,
      parent_agent_id: a.parentId,
      spawn_depth: a.spawnDepth,
      live_probe_performed: false,
      construction_verified: false,
    },
  };
}

const MODULE_PURPOSE: Record<string, string> = {
  actions: 'operations shared by the CLI and the MCP tools, one command each',
  cli: 'the colony command-line interface',
  commands: 'pure command deciders, run in one transaction each',
  engine:
    'the event-sourcing engine: the append-only, hash-chained log, command handling, projections, rebuild, verification',
  events: 'the event types of every domain and the pure facts they carry (principals, agent config)',
  evidence: 'signed checkpoints, goal bundles and the checks an auditor runs',
  report: 'the HTML report of a goal',
  http: 'the HTTP server: Streamable HTTP MCP endpoint, REST, SSE, probe triggers, web UI',
  mcp: 'the MCP server: tools, authentication, trust checks, audit trail, path policy, confirmations, capability catalog',
  projections: 'read tables kept current from the events and rebuildable from the log',
  runtime: 'the reactor and harness: agent processes, verifiers, probes',
};

export function moduleRecords(root: string, tools: readonly AnyTool[], errors: string[]): CapabilityRecord[] {
  let names: string[];
  try {
    names = readdirSync(join(root, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
      .map((d) => d.name)
      .sort(compareStrings);
  } catch (e) {
    errors.push(`modules: ${describe(e)}: package root src is unavailable`);
    return [];
  }
  return names.map((name) => moduleRecord(root, name, tools));
}

function moduleRecord(root: string, name: string, tools: readonly AnyTool[]): CapabilityRecord {
  const path = `src/${name}`;
  const sourceFiles = countTs(join(root, path));
  const readme = existingFile(root, `${path}/README.md`);
  const hasTests = existsSync(join(root, 'test', name)) || existsSync(join(root, 'test', `${name}.test.ts`));
  const mcpTools = tools
    .filter((t) => t.module === name)
    .map((t) => t.name)
    .sort(compareStrings);
  const missing = [...(readme ? [] : ['README.md']), ...(hasTests ? [] : [`test/${name}`])];
  return {
    id: `module:${name}`,
    kind: 'module',
    name,
    display_name: `colony.${name}`,
    description: `Top-level Colony source module${MODULE_PURPOSE[name] ? `: ${MODULE_PURPOSE[name]}` : ''}`,
    status: sourceFiles > 0 ? 'available' : 'unavailable',
    source: path,
    documentation: readme ?? existingFile(root, `docs/modules/${name}.md`),
    provenance: { discovered_by: 'filesystem', root: 'src', relative_path: path, metadata_only: true },
    trust: 'read_only',
    tags: ['module', 'source'],
    details: {
      has_readme: readme !== null,
      has_tests: hasTests,
      has_mcp_tools: mcpTools.length > 0,
      mcp_tools: mcpTools,
      source_files: sourceFiles,
      missing_surfaces: missing,
    },
  };
}

/**
 * `trust` describes and grants nothing: `read_only` for read tools, `restricted` for anything that
 * changes state (write, elevated, destructive). The exact class is in `details.trust_class`.
 */
export function toolRecord(tool: AnyTool, root: string): CapabilityRecord {
  const readOnly = tool.trust === 'read';
  const safeModule = /^[A-Za-z0-9_-]+$/.test(tool.module);
  const source = safeModule ? `src/${tool.module}` : 'tool registry';
  return {
    id: `tool:${tool.name}`,
    kind: 'tool',
    name: tool.name,
    display_name: tool.title,
    description: tool.description,
    status: 'available',
    source,
    documentation: safeModule ? existingFile(root, `${source}/README.md`) : null,
    provenance: { discovered_by: SOURCE_NAMES.tools, source_path: source, metadata_only: true },
    trust: readOnly ? 'read_only' : 'restricted',
    tags: ['mcp', 'static', 'tool', readOnly ? 'read_only' : tool.trust, `${tool.surface}_surface`],
    details: {
      schema: inputJsonSchema(tool),
      dynamic: false,
      destructive: tool.trust === 'destructive',
      trust_class: tool.trust,
      surface: tool.surface,
      module: tool.module,
      requires_confirmation: tool.trust === 'destructive',
    },
  };
}

/** The repo-relative path when that file exists, else null. */
function existingFile(root: string, relative: string): string | null {
  try {
    return statSync(join(root, relative)).isFile() ? relative : null;
  } catch {
    return null;
  }
}

/** Source files (`.ts`, or `.js` in a build) under the folder: a folder without any is `unavailable`. */
function countTs(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(
      (f) => (f.endsWith('.ts') && !f.endsWith('.d.ts')) || f.endsWith('.js'),
    ).length;
  } catch {
    return 0;
  }
}

/** `Type: message` without absolute paths (file-system errors are reported by their code). */
function describe(e: unknown): string {
  if (!(e instanceof Error)) return `${typeof e}: ${String(e)}`;
  const code = (e as NodeJS.ErrnoException).code;
  return code && (e as NodeJS.ErrnoException).path ? `${e.name}: ${code}` : `${e.name}: ${e.message}`;
}
