import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as z from 'zod';
import {
  agentRecord,
  buildColonyCatalog,
  moduleRecords,
  REPO_ROOT,
  toolRecord,
} from '../../src/mcp/catalog-sources.js';
import { defineTool, type AnyTool, type Trust } from '../../src/mcp/tool.js';
import { agentRow } from '../helpers/capabilities.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Colony's catalog sources without MCP: agent rows, the src/ folders of a checkout (a temp tree or this
 * repository) and registry tools become records; nothing absolute, secret or executable leaks into them.
 */
const tool = (name: string, trust: Trust, module = 'mcp'): AnyTool =>
  defineTool({
    name,
    title: name,
    description: `does ${name}`,
    trust,
    surface: 'agent',
    module,
    input: z.strictObject({ n: z.number().int().default(1) }),
    handler: () => ({}),
  });

describe('agent records', () => {
  it('derive status from the backend command and quarantine', () => {
    assert.equal(agentRecord(agentRow('a', { command: 'run-a --fast' })).status, 'implementation_present');
    assert.equal(agentRecord(agentRow('b')).status, 'declared');
    assert.equal(agentRecord(agentRow('c', { command: '   ' })).status, 'declared');
    assert.equal(agentRecord(agentRow('d', { command: 'run-d', quarantined: true })).status, 'unavailable');
  });

  it('are metadata only and never carry the system prompt or the command line', () => {
    const r = agentRecord(
      agentRow('claude', { command: 'claude --key sk-SECRET', tier: 'assisted', model: 'claude-x', agentId: 7 }),
    );
    assert.equal(r.id, 'agent:claude');
    assert.equal(
      r.description,
      'assisted agent using claude-x; registry metadata only; construction and health are unverified',
    );
    assert.equal(r.trust, 'execution');
    assert.deepEqual(r.provenance, {
      discovered_by: 'agent_registry',
      source_path: 'agent registry',
      stream: 'agent-7',
      metadata_only: true,
    });
    assert.equal(r.details.live_probe_performed, false);
    assert.equal(r.details.construction_verified, false);
    assert.equal(r.details.command_present, true);
    const json = JSON.stringify(r);
    assert.ok(!json.includes('SECRET') && !json.includes('sk-'), json);
    assert.ok(Object.values(r).every((v) => typeof v !== 'function'));
  });
});

describe('module records', () => {
  it('list each src/ folder with repo-relative paths and what it has', () => {
    const { dir, cleanup } = tempDir();
    try {
      mkdirSync(join(dir, 'src/alpha/deep'), { recursive: true });
      writeFileSync(join(dir, 'src/alpha/deep/a.ts'), '');
      writeFileSync(join(dir, 'src/alpha/README.md'), '# alpha');
      mkdirSync(join(dir, 'src/empty'));
      mkdirSync(join(dir, 'test/alpha'), { recursive: true });
      writeFileSync(join(dir, 'src/top.ts'), '');
      const errors: string[] = [];
      const records = moduleRecords(dir, [tool('a_tool', 'read', 'alpha'), tool('other', 'read')], errors);
      assert.deepEqual(errors, []);
      assert.deepEqual(
        records.map((r) => [r.id, r.status]),
        [
          ['module:alpha', 'available'],
          ['module:empty', 'unavailable'],
        ],
      );
      const alpha = records[0]!;
      assert.equal(alpha.source, 'src/alpha');
      assert.equal(alpha.documentation, 'src/alpha/README.md');
      assert.deepEqual(alpha.details, {
        has_readme: true,
        has_tests: true,
        has_mcp_tools: true,
        mcp_tools: ['a_tool'],
        source_files: 1,
        missing_surfaces: [],
      });
      assert.deepEqual(records[1]!.details.missing_surfaces, ['README.md', 'test/empty']);
      assert.ok(!JSON.stringify(records).includes(dir), 'no absolute path');
    } finally {
      cleanup();
    }
  });

  it('fail soft without leaking the absolute root', () => {
    const { dir, cleanup } = tempDir();
    try {
      const catalog = buildColonyCatalog({ agents: () => [agentRow('a')], tools: [], root: dir }, false);
      const summary = catalog.summary();
      assert.equal(summary.catalog_state, 'degraded');
      assert.deepEqual(summary.errors, ['modules: Error: ENOENT: package root src is unavailable']);
      assert.equal(summary.count, 1, 'the agent source still answers');
    } finally {
      cleanup();
    }
  });
});

describe('tool records', () => {
  it('describe trust (read_only or restricted), the schema, surface and class', () => {
    const read = toolRecord(tool('look', 'read'), REPO_ROOT);
    assert.equal(read.trust, 'read_only');
    assert.deepEqual(read.tags, ['mcp', 'static', 'tool', 'read_only', 'agent_surface']);
    assert.equal((read.details.schema as { type: string }).type, 'object');
    assert.equal(read.source, 'src/mcp');
    for (const trust of ['write', 'elevated', 'destructive'] as const) {
      const r = toolRecord(tool('change', trust), REPO_ROOT);
      assert.equal(r.trust, 'restricted');
      assert.equal(r.details.trust_class, trust);
      assert.equal(r.details.destructive, trust === 'destructive');
    }
  });

  it('never build a path from an unsafe module name', () => {
    const r = toolRecord(tool('odd', 'read', '../../etc'), REPO_ROOT);
    assert.equal(r.source, 'tool registry');
    assert.equal(r.documentation, null);
  });
});

describe('the Colony catalog of this checkout', () => {
  it("lists this repository's modules and, only on request, its tools", () => {
    const tools = [tool('look', 'read')];
    const off = buildColonyCatalog({ agents: () => [], tools, root: REPO_ROOT }, false);
    assert.deepEqual(off.list({ kind: 'tool', include_unavailable: true, limit: 500 }), []);
    assert.equal(off.get('module:mcp')?.status, 'available');
    assert.deepEqual(off.get('mcp')?.details.mcp_tools, ['look']);
    assert.deepEqual(off.summary().provenance, {
      live_probes_performed: false,
      mode: 'metadata_only',
      schema_version: 1,
      sources: ['agent_registry', 'package_filesystem'],
      tool_discovery_requested: false,
    });
    const on = buildColonyCatalog({ agents: () => [], tools, root: REPO_ROOT }, true);
    assert.deepEqual(
      on.list({ kind: 'tool' }).map((r) => r.id),
      ['tool:look'],
    );
    assert.deepEqual(on.summary().provenance.sources, ['agent_registry', 'package_filesystem', 'mcp_tool_registry']);
    assert.ok(
      on.list({ limit: 500 }).every((r) => !r.source.startsWith('/') && !(r.documentation ?? '').startsWith('/')),
    );
  });

  it('reports a failing agent source as degraded and keeps the rest', () => {
    const catalog = buildColonyCatalog(
      {
        agents: () => {
          throw new Error('database is locked');
        },
        tools: [],
        root: REPO_ROOT,
      },
      false,
    );
    assert.equal(catalog.summary().catalog_state, 'degraded');
    assert.deepEqual(catalog.summary().errors, ['agents: Error: database is locked']);
    assert.ok(catalog.list({ kind: 'module' }).length > 0);
  });
});
