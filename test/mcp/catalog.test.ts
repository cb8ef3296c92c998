import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CapabilityCatalog,
  CatalogInputError,
  jsonSafe,
  scoreRecord,
  searchTerms,
  type CapabilityRecord,
} from '../../src/mcp/catalog.js';
import {
  agentOperabilityStatus,
  getAgentCapability,
  listAgentCapabilities,
  searchAgentCapabilities,
  type BuildCatalog,
} from '../../src/mcp/catalog-queries.js';
import { capabilityRecord as rec } from '../helpers/capabilities.js';

/**
 * The catalog core, without MCP and without Colony's sources: ordering, the [1, 500] clamp, scoring,
 * search over the whole filtered catalog, lookup, summary and JSON safety (codomyrmex's test_catalog.py).
 */
const ids = (records: readonly CapabilityRecord[]): string[] => records.map((r) => r.id);
const fieldOf = (fn: () => unknown): { field: string; message: string } => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof CatalogInputError, `expected a CatalogInputError, got ${String(e)}`);
    return { field: e.field, message: e.message };
  }
  assert.fail('expected a CatalogInputError');
};

const mixed = new CapabilityCatalog([
  rec('tool', 'alpha'),
  rec('module', 'zeta'),
  rec('agent', 'claude', { documentation: 'docs/agents/claude/README.md' }),
  rec('agent', 'beta', { status: 'implementation_present' }),
  rec('module', 'alpha'),
  rec('agent', 'gone', { status: 'unavailable' }),
  rec('agent', 'ann'),
]);

describe('catalog ordering and pages', () => {
  it('sorts by (kind, name, id): agent < module < tool', () => {
    const all = mixed.list({ limit: 500, include_unavailable: true });
    assert.deepEqual(ids(all), [
      'agent:ann',
      'agent:beta',
      'agent:claude',
      'agent:gone',
      'module:alpha',
      'module:zeta',
      'tool:alpha',
    ]);
    const sorted = [...all].sort((a, b) =>
      `${a.kind}\0${a.name}\0${a.id}` < `${b.kind}\0${b.name}\0${b.id}` ? -1 : 1,
    );
    assert.deepEqual(all, sorted);
  });

  it('hides unavailable records unless asked, and filters by kind', () => {
    assert.ok(!ids(mixed.list()).includes('agent:gone'));
    assert.ok(ids(mixed.list({ include_unavailable: true })).includes('agent:gone'));
    assert.deepEqual(ids(mixed.list({ kind: 'module' })), ['module:alpha', 'module:zeta']);
    assert.deepEqual(
      mixed.list({ kind: 'tool', include_unavailable: true, limit: 500 }).map((r) => r.kind),
      ['tool'],
    );
  });

  it('clamps limit to [1, 500] (0 and negatives give one record)', () => {
    assert.equal(mixed.list({ limit: 0 }).length, 1);
    assert.equal(mixed.list({ limit: -7 }).length, 1);
    const big = new CapabilityCatalog(
      Array.from({ length: 600 }, (_, i) => rec('tool', `capability_${String(i).padStart(3, '0')}`)),
    );
    assert.equal(big.list({ limit: 10_000 }).length, 500);
    assert.equal(big.list().length, 100);
    assert.equal(big.search('capability').length, 20);
  });

  it('rejects a limit that is not an integer (no coercion, booleans refused)', () => {
    for (const limit of ['10', true, 1.5, null, Number.NaN]) {
      assert.deepEqual(
        fieldOf(() => mixed.list({ limit })),
        { field: 'limit', message: 'limit must be an integer' },
      );
    }
  });

  it("rejects unknown kinds and non-boolean flags with codomyrmex's messages", () => {
    assert.deepEqual(
      fieldOf(() => mixed.list({ kind: 'unknown' })),
      { field: 'kind', message: "Unsupported capability kind: 'unknown'" },
    );
    assert.deepEqual(
      fieldOf(() => mixed.list({ kind: 3 })),
      { field: 'kind', message: 'Unsupported capability kind: 3' },
    );
    assert.deepEqual(
      fieldOf(() => mixed.list({ include_unavailable: 'yes' })),
      { field: 'include_unavailable', message: 'include_unavailable must be a boolean' },
    );
  });
});

describe('catalog search', () => {
  it('scores +12 for name or id equality, +8 for a name prefix, +3 for a substring, summed over terms', () => {
    const r = rec('agent', 'deploy', { description: 'ships code', tags: ['ops'] });
    assert.equal(scoreRecord(r, ['deploy']), 12);
    assert.equal(scoreRecord(r, ['agent:deploy']), 12);
    assert.equal(scoreRecord(r, ['dep']), 8);
    assert.equal(scoreRecord(r, ['ships']), 3);
    assert.equal(scoreRecord(r, ['ops']), 3);
    assert.equal(scoreRecord(r, ['deploy', 'dep', 'code', 'nothing']), 12 + 8 + 3);
    assert.equal(scoreRecord(r, ['nothing']), 0);
  });

  it('ranks by score, then (kind, name, id), and drops records that do not match', () => {
    const catalog = new CapabilityCatalog([
      rec('tool', 'x', { description: 'runs a deploy' }),
      rec('agent', 'deployer'),
      rec('module', 'deploy'),
      rec('agent', 'other'),
      rec('agent', 'y', { description: 'deploy helper' }),
    ]);
    assert.deepEqual(ids(catalog.search('deploy')), ['module:deploy', 'agent:deployer', 'agent:y', 'tool:x']);
    assert.deepEqual(ids(catalog.search('DEPLOY', { limit: 1 })), ['module:deploy']);
  });

  it('searches the whole filtered catalog, so a record that sorts late is found with a small limit', () => {
    const records = Array.from({ length: 600 }, (_, i) => rec('tool', `capability_${String(i).padStart(3, '0')}`));
    const catalog = new CapabilityCatalog([...records, rec('tool', 'wallet_list')]);
    assert.ok(!ids(catalog.list({ limit: 500 })).includes('tool:wallet_list'), 'beyond the largest page');
    assert.deepEqual(ids(catalog.search('wallet', { kind: 'tool', limit: 1 })), ['tool:wallet_list']);
  });

  it('finds documentation paths and honours kind and unavailable filters', () => {
    assert.ok(mixed.search('docs/agents/claude', { kind: 'agent' }).length > 0);
    assert.deepEqual(ids(mixed.search('gone')), []);
    assert.deepEqual(ids(mixed.search('gone', { include_unavailable: true })), ['agent:gone']);
    assert.deepEqual(ids(mixed.search('alpha', { kind: 'tool' })), ['tool:alpha']);
  });

  it('refuses blank queries and queries without searchable characters — never a listing', () => {
    assert.deepEqual(
      fieldOf(() => mixed.search('   ')),
      { field: 'query', message: 'query must not be empty' },
    );
    assert.deepEqual(
      fieldOf(() => mixed.search('')),
      { field: 'query', message: 'query must not be empty' },
    );
    assert.deepEqual(
      fieldOf(() => mixed.search('!!!')),
      { field: 'query', message: 'query must contain searchable characters' },
    );
    assert.deepEqual(
      fieldOf(() => mixed.search(null)),
      { field: 'query', message: 'query must be a string' },
    );
    assert.deepEqual(fieldOf(() => mixed.search('x', { kind: 'nope' })).field, 'kind');
    assert.deepEqual(searchTerms('Find the Code-Reviewer, tool:whoami!'), [
      'find',
      'the',
      'code-reviewer',
      'tool:whoami',
    ]);
  });
});

describe('catalog lookup', () => {
  const shared = new CapabilityCatalog([rec('module', 'shared'), rec('agent', 'shared'), rec('agent', 'solo')]);

  it('finds by exact id or by a bare name; a bare name shared by two kinds is ambiguous', () => {
    assert.deepEqual(ids(shared.find('shared')), ['agent:shared', 'module:shared']);
    assert.equal(shared.get('shared'), null);
    assert.equal(shared.get('shared', { kind: 'agent' })?.id, 'agent:shared');
    assert.equal(shared.get('module:shared')?.id, 'module:shared');
    assert.deepEqual(mixed.get('claude'), mixed.get('agent:claude'));
    assert.equal(shared.get('  solo  ')?.id, 'agent:solo');
  });

  it('matches names only for inputs without a colon, and returns nothing for unknown ids', () => {
    assert.deepEqual(ids(shared.find('tool:shared')), []);
    assert.deepEqual(ids(shared.find('agent:not-real')), []);
    assert.deepEqual(ids(shared.find('x:solo')), []);
  });

  it('rejects a missing or blank id and a bad kind', () => {
    assert.deepEqual(
      fieldOf(() => shared.find(null)),
      { field: 'capability_id', message: 'capability_id must be a string' },
    );
    assert.deepEqual(
      fieldOf(() => shared.find('  ')),
      { field: 'capability_id', message: 'capability_id must not be empty' },
    );
    assert.equal(fieldOf(() => shared.find('solo', { kind: 'unknown' })).field, 'kind');
  });
});

describe('catalog summary and JSON safety', () => {
  it('counts every record by kind and status, sorted, with its provenance', () => {
    const provenance = { schema_version: 1, sources: ['agent_registry'] };
    const s = new CapabilityCatalog(mixed.list({ limit: 500, include_unavailable: true }), [], provenance).summary();
    assert.equal(s.count, 7);
    assert.equal(s.catalog_state, 'ready');
    assert.deepEqual(Object.entries(s.by_kind), [
      ['agent', 4],
      ['module', 2],
      ['tool', 1],
    ]);
    assert.deepEqual(Object.keys(s.by_status), ['available', 'implementation_present', 'unavailable']);
    assert.deepEqual(s.provenance, provenance);
  });

  it('is empty with no records and degraded with any source error (errors sorted and unique)', () => {
    const empty = new CapabilityCatalog([]).summary();
    assert.equal(empty.catalog_state, 'empty');
    assert.equal(empty.count, 0);
    const degraded = new CapabilityCatalog(
      [rec('agent', 'a')],
      ['b: Error: x', 'a: Error: y', 'b: Error: x'],
    ).summary();
    assert.equal(degraded.catalog_state, 'degraded');
    assert.deepEqual(degraded.errors, ['a: Error: y', 'b: Error: x']);
  });

  it('turns metadata into deterministic JSON', () => {
    assert.deepEqual(jsonSafe(new Set([3, 1])), [1, 3]);
    assert.deepEqual(jsonSafe(new (class Widget {})()), { unsupported_type: 'Widget' });
    assert.deepEqual(jsonSafe({}), {});
    assert.equal(jsonSafe(Number.NaN), 'nan');
    assert.equal(jsonSafe(-Infinity), '-inf');
    assert.deepEqual(Object.keys(jsonSafe({ b: 1, a: { d: 1, c: 2 } }) as object), ['a', 'b']);
    assert.deepEqual(
      jsonSafe(
        new Map<string, unknown>([
          ['z', 1],
          ['y', [Number.POSITIVE_INFINITY]],
        ]),
      ),
      { y: ['inf'], z: 1 },
    );
    const catalog = new CapabilityCatalog([
      rec('agent', 'odd', { details: { n: Number.NaN, s: new Set(['b', 'a']), f: () => 1 } }),
    ]);
    const record = catalog.get('odd')!;
    assert.deepEqual(record.details, { f: { unsupported_type: 'function' }, n: 'nan', s: ['a', 'b'] });
    assert.doesNotThrow(() => JSON.stringify(record));
  });
});

/**
 * The navigation answers called directly (codomyrmex's test_mcp_tools.py, which calls the Python
 * functions): here, unlike over MCP, arguments are unvalidated, so wrong types reach the catalog and come
 * back as INVALID_* results.
 */
describe('navigation answers, called directly', () => {
  const agents = ['claude', 'codex', 'gemini', 'ollama'].map((n) =>
    rec('agent', n, { status: n === 'ollama' ? 'declared' : 'implementation_present' }),
  );
  const tools = [rec('tool', 'whoami'), rec('tool', 'shared')];
  const requested: boolean[] = [];
  const build: BuildCatalog = (includeTools) => {
    requested.push(includeTools);
    return new CapabilityCatalog([
      ...agents,
      rec('module', 'mcp'),
      rec('module', 'shared'),
      ...(includeTools ? tools : []),
    ]);
  };
  const codeOf = (r: { status: string; error_code?: string }) => (r.status === 'error' ? r.error_code : r.status);

  it('lists a bounded page of one kind', () => {
    const r = listAgentCapabilities(build, { kind: 'agent', limit: 3 });
    assert.equal(r.status, 'success');
    if (r.status !== 'success') return;
    assert.equal(r.count, 3);
    assert.ok(r.capabilities.every((c) => c.kind === 'agent'));
    assert.equal(r.summary.count, 6);
  });

  it('searches, best match first', () => {
    const r = searchAgentCapabilities(build, { query: 'claude', kind: 'agent', limit: 3 });
    assert.ok(r.status === 'success');
    assert.equal(r.capabilities[0]?.id, 'agent:claude');
    assert.equal(r.query, 'claude');
  });

  it("answers the error codes of codomyrmex's table, as results (not throws)", () => {
    assert.equal(codeOf(getAgentCapability(build, { capability_id: 'agent:not-real' })), 'CAPABILITY_NOT_FOUND');
    assert.equal(codeOf(listAgentCapabilities(build, { limit: '3' })), 'INVALID_INPUT');
    assert.equal(codeOf(listAgentCapabilities(build, { kind: 'unknown' })), 'INVALID_KIND');
    assert.equal(codeOf(listAgentCapabilities(build, { include_unavailable: 'yes' })), 'INVALID_INPUT');
    assert.equal(codeOf(listAgentCapabilities(build, { include_tools: 'yes' })), 'INVALID_INPUT');
    assert.equal(codeOf(searchAgentCapabilities(build, { query: '!!!' })), 'INVALID_QUERY');
    assert.equal(codeOf(searchAgentCapabilities(build, { query: '   ' })), 'INVALID_QUERY');
    assert.equal(codeOf(searchAgentCapabilities(build, { query: 'x', kind: 'unknown' })), 'INVALID_KIND');
    assert.equal(codeOf(searchAgentCapabilities(build, { query: 'x', limit: '1' })), 'INVALID_INPUT');
    assert.equal(codeOf(getAgentCapability(build, { capability_id: 'agent:claude', kind: 'unknown' })), 'INVALID_KIND');
    assert.equal(codeOf(getAgentCapability(build, { capability_id: null })), 'INVALID_CAPABILITY_ID');
    assert.equal(codeOf(getAgentCapability(build, { capability_id: ' ' })), 'INVALID_CAPABILITY_ID');
    assert.equal(codeOf(getAgentCapability(build, { capability_id: 'mcp', include_tools: 'yes' })), 'INVALID_INPUT');
    assert.equal(codeOf(agentOperabilityStatus(build, { include_tools: 'yes' })), 'INVALID_INPUT');
    const invalid = listAgentCapabilities(build, { kind: 'unknown' });
    assert.deepEqual(invalid, {
      status: 'error',
      error_code: 'INVALID_KIND',
      message: "Unsupported capability kind: 'unknown'",
    });
  });

  it('reports a not-found or ambiguous lookup with the id, the candidates and the summary', () => {
    const missing = getAgentCapability(build, { capability_id: ' agent:not-real ' });
    assert.ok(missing.status === 'error');
    assert.equal(missing.capability_id, ' agent:not-real ');
    assert.equal(missing.summary?.count, 6);
    assert.match(missing.message, /no capability/);
    const ambiguous = getAgentCapability(build, { capability_id: 'shared', include_tools: true });
    assert.ok(ambiguous.status === 'error');
    assert.equal(ambiguous.error_code, 'CAPABILITY_ID_AMBIGUOUS');
    assert.deepEqual(ambiguous.candidates, ['module:shared', 'tool:shared']);
    const narrowed = getAgentCapability(build, { capability_id: 'shared', kind: 'module' });
    assert.ok(narrowed.status === 'success' && narrowed.capability.id === 'module:shared');
  });

  it('turns tool discovery on for kind "tool" and for tool: ids only', () => {
    requested.length = 0;
    listAgentCapabilities(build, {});
    listAgentCapabilities(build, { kind: 'tool' });
    searchAgentCapabilities(build, { query: 'whoami', kind: 'tool' });
    const found = getAgentCapability(build, { capability_id: '  tool:whoami' });
    getAgentCapability(build, { capability_id: 'whoami' });
    assert.deepEqual(requested, [false, true, true, true, false]);
    assert.ok(found.status === 'success' && found.capability.id === 'tool:whoami');
  });

  it('reports operability from metadata only', () => {
    const r = agentOperabilityStatus(build);
    assert.ok(r.status === 'success');
    assert.equal(r.probe_policy, 'no live probes performed');
    assert.equal(r.implementation_present_agents, 3);
    assert.equal(r.declared_agents, 4);
    assert.equal(r.dispatchability_verified, false);
    assert.equal(r.verified_dispatchable_agents, 0);
    assert.match(r.dispatchability_note, /unverified/);
    assert.equal(agentOperabilityStatus(() => new CapabilityCatalog([])).status, 'degraded');
    assert.equal(
      agentOperabilityStatus(() => new CapabilityCatalog(agents, ['agents: Error: boom'])).status,
      'degraded',
    );
  });
});
