import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { REPO_ROOT } from '../../../src/mcp/catalog-sources.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';
import { answer } from '../../helpers/calls.js';

/**
 * The navigation tools through a real SDK Client against Colony's MCP server (InMemoryTransport). Two
 * layers answer, and each test names its layer:
 * - [schema] Colony's strict zod input schemas run before the handler: a wrong type, an unknown kind or an
 *   unknown key is an `isError` result `ErrInvalidInput: …` (codomyrmex's MCP layer coerced "3" to 3 and
 *   "yes" to true instead; its INVALID_INPUT / INVALID_KIND for those come only from direct calls, which
 *   test/mcp/catalog.test.ts covers).
 * - [handler] everything that passes the schema: codomyrmex's `{"status":…}` shapes as normal results,
 *   errors included (`error_code`, no isError).
 * The Client validates every structuredContent against the tool's advertised outputSchema.
 */
const NAV = [
  'agent_operability_status',
  'get_agent_capability',
  'list_agent_capabilities',
  'search_agent_capabilities',
];

let f: McpFixture;
let owner: Client;
let agent: Client;

before(async () => {
  f = await mcpFixture();
  f.addAgent('claude', {
    command: 'claude-runner --fast',
    tier: 'assisted',
    model: 'claude-x',
    systemPrompt: 'PROMPT-CLAUDE',
  });
  f.addAgent('codex', { command: 'codex-runner', model: 'gpt-x' });
  f.addAgent('gemini', { model: 'gemini-x' });
  f.addAgent('mcp', { model: 'm' });
  f.addAgent('narrow', { toolScope: ['whoami'] });
  const other = f.addOwner('other');
  f.addAgent('stranger', { ownerId: other.userId });
  owner = await f.connect(f.ownerToken);
  agent = await f.connect(f.agentToken);
});
after(() => f.close());

type Body = Record<string, any>;

/**
 * A call that is not an MCP error and whose text is the JSON of its structuredContent; returns the body,
 * which may be a `{status: 'error'}` answer.
 */
async function answered(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Body> {
  const { text, body } = await answer(client, name, args);
  assert.deepEqual(JSON.parse(text), body, 'the text is the JSON of structuredContent');
  return body;
}
const ids = (body: Body): string[] => (body.capabilities as { id: string }[]).map((r) => r.id);

describe('tools/list', () => {
  it('lists the four tools, unprefixed, read-only, to owners and agents', async () => {
    for (const client of [owner, agent]) {
      const tools = (await client.listTools()).tools.filter((t) => NAV.includes(t.name));
      assert.deepEqual(
        tools.map((t) => t.name),
        NAV,
      );
      for (const t of tools) {
        assert.equal(t.annotations?.readOnlyHint, true);
        assert.equal(t.annotations?.destructiveHint, false);
        assert.equal(t.inputSchema.additionalProperties, false);
        assert.ok(Array.isArray((t.outputSchema as { anyOf?: unknown[] }).anyOf));
      }
    }
  });

  it("advertises codomyrmex's parameters and defaults", async () => {
    const byName = new Map((await owner.listTools()).tools.map((t) => [t.name, t.inputSchema as Body]));
    const list = byName.get('list_agent_capabilities')!;
    assert.equal(list.properties.limit.default, 100);
    assert.equal(list.properties.limit.type, 'integer');
    assert.equal(list.properties.include_tools.default, false);
    assert.equal(list.properties.include_unavailable.default, false);
    assert.deepEqual(list.properties.kind.anyOf, [
      { type: 'string', enum: ['agent', 'module', 'tool'] },
      { type: 'null' },
    ]);
    assert.equal(list.required, undefined);
    assert.equal(byName.get('search_agent_capabilities')!.properties.limit.default, 20);
    assert.deepEqual(byName.get('search_agent_capabilities')!.required, ['query']);
    assert.deepEqual(byName.get('get_agent_capability')!.required, ['capability_id']);
    assert.deepEqual(Object.keys(byName.get('agent_operability_status')!.properties), ['include_tools']);
  });
});

describe('list_agent_capabilities [handler]', () => {
  it('returns a bounded page of one kind', async () => {
    const body = await answered(owner, 'list_agent_capabilities', { kind: 'agent', limit: 3 });
    assert.equal(body.status, 'success');
    assert.equal(body.count, 3);
    assert.deepEqual(ids(body), ['agent:claude', 'agent:codex', 'agent:gemini']);
  });

  it("lists the caller's owner's agents and the src modules, sorted, without tools by default", async () => {
    const body = await answered(agent, 'list_agent_capabilities', { limit: 500 });
    const all = ids(body);
    assert.ok(all.includes('agent:worker') && all.includes('module:mcp') && all.includes('module:events'));
    assert.ok(!all.includes('agent:stranger'), "another owner's agent");
    assert.ok(!all.some((id) => id.startsWith('tool:')));
    assert.deepEqual(
      all,
      [...all].sort((a, b) => (a < b ? -1 : 1)),
      'agent < module, then by name',
    );
    assert.deepEqual(body.summary.provenance, {
      live_probes_performed: false,
      mode: 'metadata_only',
      schema_version: 1,
      sources: ['agent_registry', 'package_filesystem'],
      tool_discovery_requested: false,
    });
    assert.equal(body.summary.catalog_state, 'ready');
    const status = Object.fromEntries((body.capabilities as Body[]).map((r) => [r.id, r.status]));
    assert.equal(status['agent:claude'], 'implementation_present');
    assert.equal(status['agent:gemini'], 'declared');
    assert.equal(status['module:mcp'], 'available');
  });

  it('clamps limit to [1, 500]', async () => {
    assert.equal((await answered(owner, 'list_agent_capabilities', { limit: 0 })).count, 1);
    const big = await answered(owner, 'list_agent_capabilities', { limit: 1_000_000, include_tools: true });
    assert.equal(big.count, big.summary.count);
  });

  it('lists only the tools the caller can see when kind is "tool"', async () => {
    const mine = ids(await answered(owner, 'list_agent_capabilities', { kind: 'tool' }));
    const theirs = ids(await answered(agent, 'list_agent_capabilities', { kind: 'tool' }));
    assert.ok(mine.includes('tool:revoke_token') && mine.includes('tool:list_agent_capabilities'));
    assert.ok(!theirs.includes('tool:revoke_token') && !theirs.includes('tool:list_tokens'));
    assert.ok(theirs.includes('tool:whoami'));
  });
});

describe('search_agent_capabilities [handler]', () => {
  it('puts the best match first', async () => {
    const body = await answered(owner, 'search_agent_capabilities', { query: 'claude', kind: 'agent', limit: 3 });
    assert.equal(body.capabilities[0].id, 'agent:claude');
    assert.equal(body.query, 'claude');
  });

  it('searches the whole catalog, so a record that sorts last is found with limit 1', async () => {
    const body = await answered(owner, 'search_agent_capabilities', { query: 'whoami', include_tools: true, limit: 1 });
    assert.deepEqual(ids(body), ['tool:whoami']);
  });

  it('answers INVALID_QUERY for blank queries and queries without searchable characters, as results', async () => {
    for (const [query, message] of [
      ['!!!', 'query must contain searchable characters'],
      ['   ', 'query must not be empty'],
      ['', 'query must not be empty'],
    ]) {
      const body = await answered(owner, 'search_agent_capabilities', { query });
      assert.deepEqual(body, { status: 'error', error_code: 'INVALID_QUERY', message });
    }
  });
});

describe('get_agent_capability [handler]', () => {
  it('answers CAPABILITY_NOT_FOUND as a result with the id and the summary', async () => {
    const body = await answered(owner, 'get_agent_capability', { capability_id: 'agent:not-real' });
    assert.equal(body.status, 'error');
    assert.equal(body.error_code, 'CAPABILITY_NOT_FOUND');
    assert.equal(body.capability_id, 'agent:not-real');
    assert.equal(typeof body.summary.count, 'number');
  });

  it('resolves a bare name, and reports a shared one as ambiguous with sorted candidates', async () => {
    assert.deepEqual(
      await answered(owner, 'get_agent_capability', { capability_id: 'claude' }),
      await answered(owner, 'get_agent_capability', { capability_id: 'agent:claude' }),
    );
    const ambiguous = await answered(owner, 'get_agent_capability', { capability_id: 'mcp' });
    assert.equal(ambiguous.error_code, 'CAPABILITY_ID_AMBIGUOUS');
    assert.deepEqual(ambiguous.candidates, ['agent:mcp', 'module:mcp']);
    assert.equal(
      (await answered(owner, 'get_agent_capability', { capability_id: 'mcp', kind: 'module' })).capability.id,
      'module:mcp',
    );
  });

  it('turns tool discovery on for a tool: id, within what the caller can see', async () => {
    const revoke = (await answered(owner, 'get_agent_capability', { capability_id: 'tool:revoke_token' })).capability;
    assert.equal(revoke.trust, 'restricted');
    assert.equal(revoke.details.destructive, true);
    assert.equal(revoke.details.schema.type, 'object');
    assert.equal(
      (await answered(agent, 'get_agent_capability', { capability_id: 'tool:revoke_token' })).error_code,
      'CAPABILITY_NOT_FOUND',
    );
    const whoami = (await answered(agent, 'get_agent_capability', { capability_id: 'tool:whoami' })).capability;
    assert.equal(whoami.trust, 'read_only');
  });

  it('answers INVALID_CAPABILITY_ID for a blank id', async () => {
    assert.equal(
      (await answered(owner, 'get_agent_capability', { capability_id: '  ' })).error_code,
      'INVALID_CAPABILITY_ID',
    );
  });
});

describe('agent_operability_status [handler]', () => {
  it('reports implementation metadata with no live probes', async () => {
    const body = await answered(agent, 'agent_operability_status');
    assert.equal(body.status, 'success');
    assert.equal(body.probe_policy, 'no live probes performed');
    assert.equal(body.implementation_present_agents, 2, 'claude and codex have a backend command');
    const agents = await answered(agent, 'list_agent_capabilities', {
      kind: 'agent',
      include_unavailable: true,
      limit: 500,
    });
    assert.equal(body.declared_agents, agents.count);
    assert.ok(body.declared_agents >= body.implementation_present_agents);
    assert.equal(body.dispatchability_verified, false);
    assert.equal(body.verified_dispatchable_agents, 0);
    assert.match(body.dispatchability_note, /unverified/);
  });
});

describe('arguments refused by the schema before the handler [schema]', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['list_agent_capabilities', { limit: '3' }],
    ['list_agent_capabilities', { kind: 'unknown' }],
    ['list_agent_capabilities', { include_unavailable: 'yes' }],
    ['list_agent_capabilities', { limit: 2.5 }],
    ['list_agent_capabilities', { extra: 1 }],
    ['search_agent_capabilities', {}],
    ['get_agent_capability', { capability_id: 'agent:claude', kind: 'unknown' }],
    ['get_agent_capability', { capability_id: null }],
    ['agent_operability_status', { include_tools: 'yes' }],
  ];
  for (const [name, args] of cases) {
    it(`${name} ${JSON.stringify(args)} → ErrInvalidInput`, async () => {
      const { result, body } = await callTool(owner, name, args);
      assert.equal(result.isError, true);
      assert.match(textOf(result), /^ErrInvalidInput: /);
      assert.equal(body.error && (body.error as { code: string }).code, 'ErrInvalidInput');
    });
  }
});

describe('access and safety [Colony layer + handler]', () => {
  it('refuses an agent whose tool scope lacks the tool', async () => {
    const narrow = f.addAgent('narrow-2', { toolScope: ['whoami'] });
    const client = await f.connect(narrow.token);
    const { result } = await callTool(client, 'list_agent_capabilities');
    assert.equal(result.isError, true);
    assert.match(textOf(result), /^ErrToolNotInScope: /);
  });

  it('never returns a system prompt, a token, a command line or an absolute path', async () => {
    const texts = [];
    for (const client of [owner, agent]) {
      texts.push(
        textOf(
          (
            await callTool(client, 'list_agent_capabilities', {
              limit: 500,
              include_tools: true,
              include_unavailable: true,
            })
          ).result,
        ),
      );
      texts.push(
        textOf(
          (
            await callTool(client, 'search_agent_capabilities', {
              query: 'claude agent module tool',
              include_tools: true,
              limit: 500,
            })
          ).result,
        ),
      );
      texts.push(textOf((await callTool(client, 'agent_operability_status', { include_tools: true })).result));
    }
    const all = texts.join('\n');
    for (const secret of [
      'PROMPT-CLAUDE',
      'You are worker',
      'claude-runner',
      f.ownerToken,
      f.agentToken,
      REPO_ROOT.replace(/\/$/, ''),
      f.dataDir,
    ]) {
      assert.ok(!all.includes(secret), `leaked ${secret}`);
    }
  });
});
