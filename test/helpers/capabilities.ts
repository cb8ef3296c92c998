import type { CapabilityKind, CapabilityRecord } from '../../src/mcp/catalog.js';
import type { AgentRow } from '../../src/projections/principal-queries.js';

/** A minimal capability record for catalog tests; `extra` overrides any field. */
export function capabilityRecord(
  kind: CapabilityKind,
  name: string,
  extra: Partial<CapabilityRecord> = {},
): CapabilityRecord {
  return {
    id: `${kind}:${name}`,
    kind,
    name,
    display_name: name,
    description: `${kind} ${name}`,
    status: 'available',
    source: 'test',
    documentation: null,
    provenance: { metadata_only: true },
    trust: 'read_only',
    tags: [kind],
    details: {},
    ...extra,
  };
}

/** An agents-projection row as `listAgents` returns it. */
export function agentRow(name: string, extra: Partial<AgentRow> = {}): AgentRow {
  return {
    agentId: 1,
    name,
    ownerId: 1,
    model: 'test-model',
    systemPrompt: `SECRET PROMPT of ${name}`,
    toolScope: ['whoami'],
    tier: 'supervised',
    command: null,
    ownCommand: null,
    runtime: null,
    ownRuntime: null,
    runnable: false,
    parentId: null,
    spawnDepth: 0,
    status: 'idle',
    quarantined: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    quarantineReason: null,
    quarantinedAt: null,
    configHash: '0'.repeat(64),
    skills: [],
    mcpServers: [],
    subagents: [],
    ...extra,
  };
}
