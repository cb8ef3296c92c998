import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { delegationCap, rollingScore, type Evidence, type Grant } from '../../src/commands/trust.js';
import { agentConfigHash, type AgentRegistered } from '../../src/events/principals.js';
import { byCodePoint, configHash, type AgentConfig, type AgentMcpServer } from '../../src/events/agent-config.js';

/**
 * Trust, pure, case by case against SynapBus's config_hash_test, delegation_test and ledger_test: the
 * config hash, the delegation cap and the rolling reputation score.
 */
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** SynapBus's config_hash_test.go `baseConfig()`. */
const baseConfig = (): AgentConfig => ({
  model: 'claude-opus-4',
  system_prompt: 'You are a careful research assistant.',
  tool_scope: ['search', 'fetch', 'summarize'],
  skills: ['writing', 'research'],
  subagents: ['reviewer', 'critic'],
  mcp_servers: [
    { name: 'synapbus', url: 'http://localhost:8080/mcp', transport: 'http' },
    { name: 'fs', url: 'stdio://fs', transport: 'stdio' },
  ],
});
const EMPTY: AgentConfig = { model: '', system_prompt: '', tool_scope: [], skills: [], subagents: [], mcp_servers: [] };
const reversed = <T>(xs: readonly T[]): T[] => [...xs].reverse();
/** Every rotation of a list: a cheap set of shuffles that moves each element to each position. */
const rotations = <T>(xs: readonly T[]): T[][] => xs.map((_, i) => [...xs.slice(i), ...xs.slice(0, i)]);

describe('configHash', () => {
  describe('TestConfigHash_Deterministic: shuffles do not change it', () => {
    const base = configHash(baseConfig());
    for (const field of ['tool_scope', 'skills', 'subagents', 'mcp_servers'] as const) {
      it(`shuffling ${field}`, () => {
        for (const order of [
          ...rotations(baseConfig()[field] as unknown[]),
          reversed(baseConfig()[field] as unknown[]),
        ]) {
          assert.equal(configHash({ ...baseConfig(), [field]: order }), base, `${field} = ${JSON.stringify(order)}`);
        }
      });
    }
    it('shuffling all four at once', () => {
      const c = baseConfig();
      const all = {
        ...c,
        tool_scope: ['summarize', 'search', 'fetch'],
        skills: reversed(c.skills),
        subagents: reversed(c.subagents),
        mcp_servers: reversed(c.mcp_servers),
      };
      assert.equal(configHash(all), base);
    });
    it('is the same on every call and for equal configs built separately', () => {
      assert.equal(configHash(baseConfig()), configHash(baseConfig()));
      assert.equal(configHash(baseConfig()), base);
    });
    it('servers with the same name are ordered by url, then transport (not by input order)', () => {
      const servers: AgentMcpServer[] = [
        { name: 'x', url: 'http://b', transport: 'http' },
        { name: 'x', url: 'http://a', transport: 'sse' },
        { name: 'x', url: 'http://a', transport: 'http' },
      ];
      const h = configHash({ ...EMPTY, mcp_servers: servers });
      for (const order of [...rotations(servers), reversed(servers)])
        assert.equal(configHash({ ...EMPTY, mcp_servers: order }), h);
      assert.equal(
        h,
        sha256(
          '{"mcp_servers":[{"name":"x","transport":"http","url":"http://a"},{"name":"x","transport":"sse","url":"http://a"},' +
            '{"name":"x","transport":"http","url":"http://b"}],"model":"","skills":[],"subagents":[],"system_prompt":"","tool_scope":[]}',
        ),
      );
    });
  });

  describe('TestConfigHash_SensitiveToChanges', () => {
    const base = configHash(baseConfig());
    const cases: [string, AgentConfig][] = [
      ['the model changes', { ...baseConfig(), model: 'claude-sonnet-4' }],
      ['the prompt changes', { ...baseConfig(), system_prompt: 'You are a careless research assistant.' }],
      ['a tool is added', { ...baseConfig(), tool_scope: ['search', 'fetch', 'summarize', 'translate'] }],
      ['a tool is removed', { ...baseConfig(), tool_scope: ['search', 'fetch'] }],
      ['a tool is renamed (summarize → summarise)', { ...baseConfig(), tool_scope: ['search', 'fetch', 'summarise'] }],
      [
        'an MCP server url changes',
        {
          ...baseConfig(),
          mcp_servers: [
            { name: 'synapbus', url: 'http://localhost:8081/mcp', transport: 'http' },
            { name: 'fs', url: 'stdio://fs', transport: 'stdio' },
          ],
        },
      ],
      [
        'an MCP server transport changes',
        {
          ...baseConfig(),
          mcp_servers: [
            { name: 'synapbus', url: 'http://localhost:8080/mcp', transport: 'sse' },
            { name: 'fs', url: 'stdio://fs', transport: 'stdio' },
          ],
        },
      ],
      ['a skill is added', { ...baseConfig(), skills: ['writing', 'research', 'editing'] }],
      ['a subagent is removed', { ...baseConfig(), subagents: ['reviewer'] }],
      [
        'a value moves between fields (tool → skill)',
        { ...baseConfig(), tool_scope: ['search', 'fetch'], skills: ['writing', 'research', 'summarize'] },
      ],
    ];
    for (const [what, config] of cases) {
      it(`differs when ${what}`, () => assert.notEqual(configHash(config), base));
    }
    it('all these variants hash differently from one another', () => {
      const hashes = new Set([base, ...cases.map(([, c]) => configHash(c))]);
      assert.equal(hashes.size, cases.length + 1);
    });
  });

  describe('TestConfigHash_EmptyFieldsStable, with [] semantics', () => {
    it('empty arrays are stable and the hash is 64 lowercase hex', () => {
      const h = configHash(EMPTY);
      assert.equal(configHash({ ...EMPTY, tool_scope: [], skills: [], subagents: [], mcp_servers: [] }), h);
      assert.match(h, /^[0-9a-f]{64}$/);
      assert.match(configHash(baseConfig()), /^[0-9a-f]{64}$/);
    });
    it("the empty config hashes its RFC 8785 form with [] arrays (not the Go quirk's null)", () => {
      const canonical = '{"mcp_servers":[],"model":"","skills":[],"subagents":[],"system_prompt":"","tool_scope":[]}';
      assert.equal(configHash(EMPTY), sha256(canonical));
      // SynapBus's Go vector serializes the empty string arrays as null; Colony hashes them as [].
      const goQuirk =
        '{"mcp_servers":[],"model":"","skills":null,"subagents":null,"system_prompt":"","tool_scope":null}';
      assert.equal(sha256(goQuirk), '72cc9149c1ce2f4f12d44f42297bc515f0d00cd692b3557cb279e9676b4f02a0');
      assert.notEqual(configHash(EMPTY), sha256(goQuirk));
    });
    it('baseConfig hashes its canonical form: keys sorted, arrays sorted, servers reduced and sorted, no whitespace', () => {
      const canonical =
        '{"mcp_servers":[{"name":"fs","transport":"stdio","url":"stdio://fs"},{"name":"synapbus","transport":"http","url":"http://localhost:8080/mcp"}],' +
        '"model":"claude-opus-4","skills":["research","writing"],"subagents":["critic","reviewer"],' +
        '"system_prompt":"You are a careful research assistant.","tool_scope":["fetch","search","summarize"]}';
      assert.equal(configHash(baseConfig()), sha256(canonical));
      // The same as SynapBus's derived vector: with non-empty arrays [] vs null makes no difference.
      assert.equal(configHash(baseConfig()), 'c40ef793adc76ef33430fb6e5e9a77d845bfb798797edc5a26fd961b953ff386');
    });
  });

  describe('canonical JSON details', () => {
    it('sorts by code point, not UTF-16 units: U+FF5E sorts before U+1F600 (whose surrogates are 0xD83D…)', () => {
      const fullwidth = '\uFF5E'; // ～, one UTF-16 unit 0xFF5E
      const emoji = '\u{1F600}'; // 😀, UTF-16 0xD83D 0xDE00
      assert.deepEqual([emoji, fullwidth].sort(), [emoji, fullwidth], 'JS default sort puts the surrogate pair first');
      assert.deepEqual([emoji, fullwidth].sort(byCodePoint), [fullwidth, emoji]);
      const config: AgentConfig = {
        ...EMPTY,
        tool_scope: [emoji, fullwidth, 'a'],
        skills: [`x${emoji}`, `x${fullwidth}`],
        subagents: [fullwidth, emoji],
      };
      const canonical =
        `{"mcp_servers":[],"model":"","skills":["x${fullwidth}","x${emoji}"],"subagents":["${fullwidth}","${emoji}"],` +
        `"system_prompt":"","tool_scope":["a","${fullwidth}","${emoji}"]}`;
      assert.equal(configHash(config), sha256(canonical));
      assert.equal(configHash({ ...config, tool_scope: ['a', fullwidth, emoji] }), configHash(config));
    });
    it('byCodePoint orders prefixes first and compares whole code points', () => {
      assert.deepEqual(['ab', 'a', 'b', '', 'aa'].sort(byCodePoint), ['', 'a', 'aa', 'ab', 'b']);
      assert.ok(byCodePoint('\u{10000}', '\uFFFF') > 0);
      assert.equal(byCodePoint('\u{1F600}x', '\u{1F600}x'), 0);
    });
    it('strings are RFC 8785: raw UTF-8, <>& unescaped, control characters and quotes escaped', () => {
      const prompt = 'Use <b> & "quotes"\nthen é, 😀 and \u2028.';
      const canonical = `{"mcp_servers":[],"model":"m","skills":[],"subagents":[],"system_prompt":"Use <b> & \\"quotes\\"\\nthen é, 😀 and \u2028.","tool_scope":[]}`;
      assert.equal(configHash({ ...EMPTY, model: 'm', system_prompt: prompt }), sha256(canonical));
    });
    it('servers are reduced to {name, url, transport}: other fields do not count', () => {
      const extra = {
        name: 'fs',
        url: 'stdio://fs',
        transport: 'stdio',
        env: { TOKEN: 'x' },
        headers: ['a'],
      } as AgentMcpServer;
      assert.equal(
        configHash({ ...EMPTY, mcp_servers: [extra] }),
        configHash({ ...EMPTY, mcp_servers: [{ name: 'fs', url: 'stdio://fs', transport: 'stdio' }] }),
      );
    });
    it("does not sort or mutate the caller's arrays", () => {
      const c = baseConfig();
      const snapshot = JSON.stringify(c);
      configHash(c);
      assert.equal(JSON.stringify(c), snapshot);
    });
    it("an agent's hash ignores name, owner, tier, command, parent and depth", () => {
      const agent = (over: Partial<AgentRegistered['data']>): AgentRegistered['data'] => ({
        agentId: 1,
        name: 'scout',
        ownerId: 1,
        model: 'claude-opus-4',
        systemPrompt: 'You are a careful research assistant.',
        toolScope: ['search', 'fetch', 'summarize'],
        tier: 'supervised',
        command: null,
        parentId: null,
        spawnDepth: 0,
        skills: ['writing', 'research'],
        subagents: ['reviewer', 'critic'],
        mcpServers: baseConfig().mcp_servers as AgentMcpServer[],
        ...over,
      });
      const h = agentConfigHash(agent({}));
      assert.equal(h, configHash(baseConfig()));
      assert.equal(
        agentConfigHash(
          agent({
            agentId: 9,
            name: 'other',
            ownerId: 2,
            tier: 'autonomous',
            command: 'run-it',
            parentId: 3,
            spawnDepth: 2,
          }),
        ),
        h,
      );
      assert.notEqual(agentConfigHash(agent({ model: 'claude-sonnet-4' })), h);
      assert.equal(
        agentConfigHash(agent({ skills: undefined, subagents: undefined, mcpServers: undefined })),
        configHash({ ...baseConfig(), skills: [], subagents: [], mcp_servers: [] }),
        'fields absent in old events read as []',
      );
    });
  });
});

const grant = (over: Partial<Grant> = {}): Grant => ({
  tier: 'autonomous',
  toolScope: ['search'],
  budgetTokens: 0,
  budgetCents: 0,
  spawnDepth: 0,
  ...over,
});

describe('delegationCap', () => {
  describe('TestDelegationCap_TierMatrix: a violation iff proposed > parent; effective = min', () => {
    const matrix: [string, string, string, boolean][] = [
      ['supervised', 'supervised', 'supervised', false],
      ['supervised', 'assisted', 'supervised', true],
      ['supervised', 'autonomous', 'supervised', true],
      ['assisted', 'supervised', 'supervised', false],
      ['assisted', 'assisted', 'assisted', false],
      ['assisted', 'autonomous', 'assisted', true],
      ['autonomous', 'supervised', 'supervised', false],
      ['autonomous', 'assisted', 'assisted', false],
      ['autonomous', 'autonomous', 'autonomous', false],
    ];
    for (const [parent, proposed, effective, violates] of matrix) {
      it(`${parent} → ${proposed}: ${violates ? '✗' : 'ok'} (${effective})`, () => {
        const r = delegationCap(grant({ tier: parent }), grant({ tier: proposed }), 3);
        assert.equal(r.effective.tier, effective);
        assert.deepEqual(r.violations.length, violates ? 1 : 0, r.violations.join('; '));
        if (violates) assert.match(r.violations[0]!, new RegExp(`tier "${proposed}" exceeds parent tier "${parent}"`));
        assert.equal(r.depthExceeded, false);
      });
    }
    it('an unknown proposed tier is treated as supervised, with a violation', () => {
      const r = delegationCap(grant({ tier: 'autonomous' }), grant({ tier: 'god-mode' }), 3);
      assert.equal(r.effective.tier, 'supervised');
      assert.equal(r.violations.length, 1);
      assert.match(r.violations[0]!, /unknown autonomy tier "god-mode"/);
    });
    it('an unknown parent tier is treated as supervised, without a violation of its own', () => {
      const ok = delegationCap(grant({ tier: 'legacy' }), grant({ tier: 'supervised' }), 3);
      assert.deepEqual([ok.effective.tier, ok.violations], ['supervised', []]);
      const over = delegationCap(grant({ tier: 'legacy' }), grant({ tier: 'assisted' }), 3);
      assert.equal(over.effective.tier, 'supervised');
      assert.equal(over.violations.length, 1);
      assert.match(over.violations[0]!, /tier "assisted" exceeds parent tier "supervised"/);
    });
  });

  describe('TestDelegationCap_ToolScope: effective = sorted intersection, one violation per foreign tool', () => {
    const parent = grant({ toolScope: ['search', 'fetch', 'summarize'] });
    const cases: [string, string[], string[], string[]][] = [
      ['an exact subset', ['search', 'fetch'], ['fetch', 'search'], []],
      ['full overlap', ['summarize', 'search', 'fetch'], ['fetch', 'search', 'summarize'], []],
      ['one forbidden tool', ['search', 'execute'], ['search'], ['execute']],
      ['all forbidden', ['execute', 'delete'], [], ['delete', 'execute']],
      ['empty proposed', [], [], []],
      ['wildcards are plain strings', ['search:*', '*'], [], ['*', 'search:*']],
    ];
    for (const [what, proposed, effective, forbidden] of cases) {
      it(what, () => {
        const r = delegationCap(parent, grant({ toolScope: proposed }), 3);
        assert.deepEqual(r.effective.toolScope, effective);
        assert.deepEqual(
          r.violations,
          forbidden.map((t) => `tool "${t}" not in parent scope`),
        );
      });
    }
    it('is order-insensitive and counts a duplicated tool once', () => {
      const a = delegationCap(parent, grant({ toolScope: ['execute', 'fetch', 'search', 'execute'] }), 3);
      const b = delegationCap(parent, grant({ toolScope: ['search', 'execute', 'fetch'] }), 3);
      assert.deepEqual(a, b);
      assert.deepEqual(a.effective.toolScope, ['fetch', 'search']);
      assert.equal(a.violations.length, 1);
    });
  });

  describe('TestDelegationCap_Budgets: 0 is unlimited for the parent and inherit for the child', () => {
    // [parent, proposed, effective, violation pattern or null] — SynapBus's table and its test cases.
    const table: [number, number, number, RegExp | null][] = [
      [0, 100, 100, null],
      [100, 50, 50, null],
      [100, 100, 100, null],
      [100, 200, 100, /200 exceeds parent cap 100/],
      [100, 0, 100, null],
      [0, 0, 0, null],
      [100, -5, 0, /-5 is negative/],
      [0, -5, 0, /-5 is negative/],
      [0, 1_000_000, 1_000_000, null],
    ];
    for (const [field, key] of [
      ['budget_tokens', 'budgetTokens'],
      ['budget_dollars_cents', 'budgetCents'],
    ] as const) {
      for (const [p, c, effective, violation] of table) {
        it(`${field}: parent ${p}, proposed ${c} → ${effective}${violation ? ' ✗' : ' ok'}`, () => {
          const r = delegationCap(grant({ [key]: p }), grant({ [key]: c }), 3);
          assert.equal(r.effective[key], effective);
          if (violation === null) assert.deepEqual(r.violations, []);
          else {
            assert.equal(r.violations.length, 1, r.violations.join('; '));
            assert.ok(r.violations[0]!.startsWith(`${field} `), r.violations[0]);
            assert.match(r.violations[0]!, violation);
          }
        });
      }
    }
    it('tokens and cents are capped independently', () => {
      const r = delegationCap(
        grant({ budgetTokens: 100, budgetCents: 0 }),
        grant({ budgetTokens: 0, budgetCents: 500 }),
        3,
      );
      assert.deepEqual([r.effective.budgetTokens, r.effective.budgetCents, r.violations], [100, 500, []]);
    });
  });

  describe('TestDelegationCap_SpawnDepth: effective = parent + 1, a violation iff it exceeds max', () => {
    const cases: [number, number, number, boolean][] = [
      [0, 5, 1, false],
      [4, 5, 5, false],
      [5, 5, 6, true],
      [0, 0, 1, true],
      [2, 3, 3, false],
      [3, 3, 4, true],
    ];
    for (const [parent, max, effective, exceeded] of cases) {
      it(`parent ${parent}, max ${max} → ${effective} ${exceeded ? '✗' : 'ok'}`, () => {
        const r = delegationCap(grant({ spawnDepth: parent }), grant({ spawnDepth: 99 }), max);
        assert.equal(r.effective.spawnDepth, effective, 'the proposed depth is ignored');
        assert.equal(r.depthExceeded, exceeded);
        assert.deepEqual(r.violations, exceeded ? [`spawn depth ${effective} exceeds max ${max}`] : []);
      });
    }
  });

  describe('TestDelegationCap_MultipleViolations', () => {
    it('the Go case: at least 4 violations', () => {
      const r = delegationCap(
        grant({ tier: 'supervised', toolScope: ['search'], budgetTokens: 100, spawnDepth: 5 }),
        grant({ tier: 'autonomous', toolScope: ['execute'], budgetTokens: 1000 }),
        5,
      );
      assert.ok(r.violations.length >= 4, r.violations.join('; '));
      assert.equal(r.depthExceeded, true);
    });
    it('every kind at once, in the stable order tier, tools (sorted), budget_tokens, budget_dollars_cents, depth', () => {
      const parent = grant({
        tier: 'assisted',
        toolScope: ['search', 'fetch'],
        budgetTokens: 100,
        budgetCents: 50,
        spawnDepth: 3,
      });
      const proposed = grant({
        tier: 'autonomous',
        toolScope: ['write', 'search', 'delete', 'execute'],
        budgetTokens: 1000,
        budgetCents: 51,
      });
      const r = delegationCap(parent, proposed, 3);
      assert.deepEqual(r.violations, [
        'autonomy tier "autonomous" exceeds parent tier "assisted"',
        'tool "delete" not in parent scope',
        'tool "execute" not in parent scope',
        'tool "write" not in parent scope',
        'budget_tokens 1000 exceeds parent cap 100',
        'budget_dollars_cents 51 exceeds parent cap 50',
        'spawn depth 4 exceeds max 3',
      ]);
      assert.deepEqual(r.effective, {
        tier: 'assisted',
        toolScope: ['search'],
        budgetTokens: 100,
        budgetCents: 50,
        spawnDepth: 4,
      });
      const again = delegationCap(parent, { ...proposed, toolScope: reversed(proposed.toolScope) }, 3);
      assert.deepEqual(again, r, 'the order does not depend on the input order');
    });
  });
});

describe('rollingScore', () => {
  const NOW = '2026-06-01T12:00:00.000Z';
  const daysAgo = (d: number): string => new Date(Date.parse(NOW) - d * 86_400_000).toISOString();
  const ev = (delta: number, ageDays = 0, weight = 1): Evidence => ({ delta, weight, at: daysAgo(ageDays) });

  it('EmptyIsNeutral: no evidence is 0.5', () => {
    assert.equal(rollingScore([], NOW), 0.5);
    assert.equal(rollingScore([], NOW, 1), 0.5);
  });
  it('Decays: +0.9 sixty days ago and +0.4 now, half-life 30 → 0.9·¼ + 0.4 = 0.625', () => {
    const s = rollingScore([ev(0.9, 60), ev(0.4)], NOW, 30);
    assert.ok(s >= 0.5 && s <= 0.75, String(s));
    assert.ok(Math.abs(s - 0.625) < 1e-12, String(s));
  });
  it('one half-life halves a delta; the default half-life is 30 days; a non-positive one means 30', () => {
    assert.ok(Math.abs(rollingScore([ev(0.8, 30)], NOW) - 0.4) < 1e-12);
    assert.ok(Math.abs(rollingScore([ev(0.8, 7)], NOW, 7) - 0.4) < 1e-12);
    assert.equal(rollingScore([ev(0.8, 30)], NOW, 0), rollingScore([ev(0.8, 30)], NOW, 30));
    assert.equal(rollingScore([ev(0.8, 30)], NOW, -5), rollingScore([ev(0.8, 30)], NOW, 30));
  });
  it('is a sum of decayed delta·weight, not an average', () => {
    assert.ok(Math.abs(rollingScore([ev(0.2), ev(0.2), ev(0.1, 0, 2)], NOW) - 0.6) < 1e-12);
    assert.ok(Math.abs(rollingScore([ev(0.5), ev(-0.2)], NOW) - 0.3) < 1e-12);
    assert.ok(Math.abs(rollingScore([ev(0.5), ev(0.15)], NOW) - 0.65) < 1e-12);
  });
  it('Clamping: 5 × −2.0 is exactly 0 and 5 × +2.0 exactly 1', () => {
    assert.equal(
      rollingScore(
        Array.from({ length: 5 }, () => ev(-2)),
        NOW,
      ),
      0,
    );
    assert.equal(
      rollingScore(
        Array.from({ length: 5 }, () => ev(2)),
        NOW,
      ),
      1,
    );
  });
  it('an idle score decays towards 0 (a 0.56 seed is below 0.3 after ~27 days)', () => {
    assert.ok(rollingScore([ev(0.56, 26)], NOW) > 0.3);
    assert.ok(rollingScore([ev(0.56, 28)], NOW) < 0.3);
  });
});
