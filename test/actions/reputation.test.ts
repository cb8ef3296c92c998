import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createOwner, registerAgent } from '../../src/actions/principals.js';
import { recordEvidence, reputationOf, reputationSettings } from '../../src/actions/reputation.js';
import { claimTask } from '../../src/actions/tasks.js';
import { fixedClock } from '../../src/clock.js';
import { rollingScore } from '../../src/commands/trust.js';
import { isDomainError } from '../../src/errors.js';
import { readAll } from '../../src/engine/store.js';
import type { StoredEvent } from '../../src/engine/event.js';
import { authenticate } from '../../src/mcp/auth.js';
import { getAgent, type AgentRow } from '../../src/projections/principal-queries.js';
import { scoreOf, scoresOf } from '../../src/projections/reputation.js';
import { mcpFixture, type McpFixture } from '../helpers/mcp.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { speaker } from '../../src/events/principals.js';
import { ok, refused } from '../helpers/calls.js';

/**
 * Reputation and quarantine through a real MCP Client and the app: seed rows, the SQL score against the pure formula, 70 % seeding of spawned agents,
 * verdicts as evidence, quarantine on appended evidence (never by time alone), the owner's
 * unquarantine_agent, the settings from the environment, and GET /api/agents/:id/reputation over real
 * sockets.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
for (const name of ['COLONY_REPUTATION_HALF_LIFE_DAYS', 'COLONY_QUARANTINE_THRESHOLD', 'COLONY_REPUTATION_DELTAS'])
  delete process.env[name];

type Body = Record<string, unknown>;
type Msg = { message_id: number; body: string; from: string; metadata: Record<string, unknown> | null };
type EvidenceRow = {
  agent_id: number;
  owner_id: number;
  config_hash: string;
  domain: string;
  delta: number;
  weight: number;
  ref: string;
  at: string;
};

const T0 = '2026-03-01T09:00:00.000Z';
const DAY = 86_400_000;
const close = (actual: number, expected: number, eps = 1e-9, what = ''): void =>
  assert.ok(Math.abs(actual - expected) <= eps, `${what} expected ≈${expected}, got ${actual}`);

interface World {
  f: McpFixture;
  clock: ReturnType<typeof fixedClock>;
  owner: Client;
  worker: Client;
  reviewer: Client;
  ids: { worker: number; reviewer: number };
}

async function world(t: TestContext): Promise<World> {
  const clock = fixedClock(T0);
  const f = await mcpFixture({ clock });
  t.after(() => f.close());
  const reviewer = f.addAgent('reviewer');
  return {
    f,
    clock,
    owner: await f.connect(f.ownerToken),
    worker: await f.connect(f.agentToken),
    reviewer: await f.connect(reviewer.token),
    ids: { worker: f.agent.agentId, reviewer: reviewer.agentId },
  };
}

let goals = 0;
/** An auto-approved goal with one task (`extra`: billing_code, verifier_config…); returns the task id. */
async function oneTask(w: World, extra: Body = {}): Promise<number> {
  goals += 1;
  const g = await ok(w.owner, 'create_goal', {
    title: `Reputation goal ${goals}`,
    description: 'A goal for the reputation tests',
    approval_mode: 'auto',
    // Verdicts as they were: an auto verifier decides a leaf, a rejection fails the task.
    require_evidence: false,
    max_rejections: 0,
  });
  const p = await ok(w.owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    reasoning: 'one step',
    tree: { title: `Step of goal ${goals}`, description: 'Do the one step carefully', ...extra },
  });
  assert.equal(p.status, 'approved');
  const ids = p.task_ids as number[];
  assert.equal(ids.length, 1);
  return ids[0]!;
}

const peer = (w: World): Body => ({ verifier_config: { kind: 'peer', agent_id: w.ids.reviewer } });

/** `client` claims and completes a task; the reviewer (if it is a peer task) gives `verdict`. */
async function work(w: World, client: Client, taskId: number, verdict?: 'approve' | 'reject'): Promise<void> {
  await ok(client, 'claim_task', { task_id: taskId });
  await ok(client, 'complete_task', { task_id: taskId, summary: 'did it' });
  if (verdict) {
    const r = await ok(w.reviewer, 'verify_task', {
      task_id: taskId,
      verdict,
      reason: verdict === 'reject' ? 'not good enough' : 'looks right',
    });
    assert.equal(r.new_status, verdict === 'reject' ? 'failed' : 'done');
  }
}

const agentRow = (f: McpFixture, id: number): AgentRow => getAgent(f.app.engine.db, id)!;
const evidenceOf = (f: McpFixture, agentId: number): EvidenceRow[] =>
  f.app.engine.db.prepare('SELECT * FROM evidence WHERE agent_id = ? ORDER BY position').all(agentId) as EvidenceRow[];
const now = (w: World): string => w.clock().toISOString();
const reputation = (w: World, id: number) => reputationOf(w.f.app, agentRow(w.f, id));
const domainScore = (w: World, id: number, domain: string): number => {
  const a = agentRow(w.f, id);
  return scoreOf(w.f.app.engine.db, a.ownerId, a.configHash, domain, now(w), 30).score;
};
const owner = (w: World) => ({ actor: `user:${w.f.owner.name}` });
async function inbox(client: Client): Promise<Msg[]> {
  return (await ok(client, 'read_inbox', { include_read: true, limit: 200 })).messages as Msg[];
}
const events = (f: McpFixture): StoredEvent[] => readAll(f.app.engine.db, { limit: 100_000 });

describe('seed rows and the score', () => {
  it('a new root agent scores 0.5 in default, from one seed row', async (t) => {
    const w = await world(t);
    const a = agentRow(w.f, w.ids.worker);
    assert.deepEqual(
      evidenceOf(w.f, w.ids.worker).map((r) => [r.owner_id, r.config_hash, r.domain, r.delta, r.weight, r.ref, r.at]),
      [[w.f.owner.userId, a.configHash, 'default', 0.5, 1, 'seed:bootstrap', T0]],
    );
    const r = reputation(w, w.ids.worker);
    assert.deepEqual(
      { ...r, domains: r.domains.map((d) => [d.domain, d.score, d.evidenceCount]) },
      {
        configHash: a.configHash,
        rollingScore: 0.5,
        evidenceCount: 1,
        lastEvidenceAt: T0,
        domains: [['default', 0.5, 1]],
        quarantined: false,
      },
    );
    const seeded = events(w.f).filter((e) => e.type === 'EvidenceRecorded' && e.streamId === `agent-${w.ids.worker}`);
    assert.equal(seeded.length, 1);
    assert.equal(seeded[0]!.meta.actor, 'user:owner');
    assert.equal(a.quarantined, false);
  });

  it('a spawned agent has no row until its first evidence; without evidence it is neutral', async (t) => {
    const w = await world(t);
    const child = w.f.addAgent('scout', { parentId: w.ids.worker, spawnDepth: 1 });
    assert.deepEqual(evidenceOf(w.f, child.agentId), []);
    const r = reputation(w, child.agentId);
    assert.deepEqual([r.rollingScore, r.evidenceCount, r.lastEvidenceAt, r.domains], [0.5, 0, null, []]);
  });

  it('SQL scoreOf equals the pure rollingScore over the same rows, at several ages and half-lives', async (t) => {
    const w = await world(t);
    const worker = () => agentRow(w.f, w.ids.worker);
    const steps: [number, string, number][] = [
      [3.25, 'default', 0.1],
      [10, 'default', -0.05],
      [0.5, 'docs', 0.2],
      [25, 'default', 0.3],
      [1 / 24, 'docs', -0.1],
      [40, 'default', 0.05],
    ];
    for (const [days, domain, delta] of steps) {
      w.clock.advance(days * DAY);
      recordEvidence(w.f.app, worker(), domain, delta, `test:${days}`, owner(w));
    }
    w.clock.advance(7.5 * DAY);
    const a = worker();
    const db = w.f.app.engine.db;
    for (const domain of ['default', 'docs']) {
      const rows = evidenceOf(w.f, w.ids.worker).filter((r) => r.domain === domain);
      assert.ok(rows.length >= 3, `${domain} has seed and evidence rows`);
      for (const h of [30, 7, 90, 0.5]) {
        const sql = scoreOf(db, a.ownerId, a.configHash, domain, now(w), h);
        const pure = rollingScore(
          rows.map((r) => ({ delta: r.delta, weight: r.weight, at: r.at })),
          now(w),
          h,
        );
        close(sql.score, pure, 1e-6, `${domain} half-life ${h}:`);
        assert.equal(sql.evidenceCount, rows.length);
        assert.equal(sql.lastEvidenceAt, rows.at(-1)!.at);
      }
    }
    // A domain without evidence is neutral, and the whole is the mean of the domain scores.
    assert.deepEqual(scoreOf(db, a.ownerId, a.configHash, 'elsewhere', now(w), 30), {
      domain: 'elsewhere',
      score: 0.5,
      evidenceCount: 0,
      lastEvidenceAt: null,
    });
    const scores = scoresOf(db, a.ownerId, a.configHash, now(w), 30);
    assert.deepEqual(
      scores.map((s) => s.domain),
      ['default', 'docs'],
    );
    close(reputation(w, w.ids.worker).rollingScore, (scores[0]!.score + scores[1]!.score) / 2);
  });

  it('the ledger reference cases through SQL: decay ≈ 0.625, clamping to exactly 0 and 1', async (t) => {
    const w = await world(t);
    const a = w.f.addAgent('ledger-decay');
    const row = () => agentRow(w.f, a.agentId);
    // ledger_test's Decays case: +0.9 sixty days ago (the 0.5 seed row plus +0.4), then a fresh +0.4.
    recordEvidence(w.f.app, row(), 'default', 0.4, 'test:bring the seed to 0.9', owner(w));
    w.clock.advance(60 * DAY);
    recordEvidence(w.f.app, row(), 'default', 0.4, 'test:fresh', owner(w));
    const s = scoreOf(w.f.app.engine.db, row().ownerId, row().configHash, 'default', now(w), 30);
    assert.equal(s.evidenceCount, 3);
    assert.ok(s.score >= 0.5 && s.score <= 0.75, String(s.score));
    close(s.score, 0.9 * 0.25 + 0.4, 1e-6);
    const low = w.f.addAgent('ledger-low');
    for (let i = 0; i < 5; i++)
      recordEvidence(w.f.app, agentRow(w.f, low.agentId), 'default', -2, `test:low ${i}`, owner(w));
    assert.equal(domainScore(w, low.agentId, 'default'), 0);
    const high = w.f.addAgent('ledger-high');
    for (let i = 0; i < 5; i++)
      recordEvidence(w.f.app, agentRow(w.f, high.agentId), 'default', 2, `test:high ${i}`, owner(w));
    assert.equal(domainScore(w, high.agentId, 'default'), 1);
  });

  it("trust is keyed by (owner, config hash, domain): another tenant's agent with the same config is not affected", async (t) => {
    const w = await world(t);
    const other = w.f.addOwner('other-owner');
    const twin = w.f.addAgent('worker', { ownerId: other.userId });
    const mine = agentRow(w.f, w.ids.worker);
    const theirs = agentRow(w.f, twin.agentId);
    assert.equal(theirs.configHash, mine.configHash, 'same name, model, prompt and tools → same hash');
    recordEvidence(w.f.app, mine, 'default', -0.1, 'test:mine', owner(w));
    close(reputation(w, w.ids.worker).rollingScore, 0.4);
    assert.equal(reputation(w, twin.agentId).rollingScore, 0.5);
    assert.equal(reputation(w, twin.agentId).evidenceCount, 1);
  });
});

describe('70 % seeding of spawned agents (within ±1 %)', () => {
  it("the first evidence in a domain is preceded by a seed of 0.7 × the parent's score there, now", async (t) => {
    const w = await world(t);
    const parent = agentRow(w.f, w.ids.worker);
    // The parent earns +0.2 in docs (its docs seed 0.5 comes first): 0.7 there, 0.5 in default.
    recordEvidence(w.f.app, parent, 'docs', 0.2, 'test:parent docs', owner(w));
    close(domainScore(w, parent.agentId, 'docs'), 0.7);
    const spawned = w.f.addAgent('scout', { parentId: parent.agentId, spawnDepth: 1 });
    const scout = await w.f.connect(spawned.token);
    assert.notEqual(agentRow(w.f, spawned.agentId).configHash, parent.configHash);

    // A peer-approved docs task: seed 0.7 × 0.7 = 0.49, then +0.1.
    const docsTask = await oneTask(w, { billing_code: 'docs', ...peer(w) });
    await work(w, scout, docsTask, 'approve');
    const docs = evidenceOf(w.f, spawned.agentId).filter((r) => r.domain === 'docs');
    assert.deepEqual(
      docs.map((r) => [r.ref, r.config_hash]),
      [
        [`seed_from_parent:${parent.configHash}`, agentRow(w.f, spawned.agentId).configHash],
        [`task:${docsTask} verified=peer:reviewer verdict=approve`, agentRow(w.f, spawned.agentId).configHash],
      ],
    );
    const seed = docs[0]!.delta;
    assert.ok(Math.abs(seed - 0.7 * 0.7) <= 0.01 * 0.49, `seed ${seed} within ±1 % of 0.49`);
    close(domainScore(w, spawned.agentId, 'docs'), 0.59);

    // 30 days later the parent's default score has halved (0.25): a default seed is 0.175, then +0.05 (auto).
    w.clock.advance(30 * DAY);
    close(domainScore(w, parent.agentId, 'default'), 0.25, 1e-6);
    await work(w, scout, await oneTask(w));
    const def = evidenceOf(w.f, spawned.agentId).filter((r) => r.domain === 'default');
    assert.deepEqual(
      def.map((r) => [r.ref.split(' ')[0]!.replace(/\d+$/, 'N'), r.at]),
      [
        [`seed_from_parent:${parent.configHash}`.replace(/\d+$/, 'N'), now(w)],
        ['task:N', now(w)],
      ],
    );
    assert.ok(Math.abs(def[0]!.delta - 0.175) <= 0.01 * 0.175, `seed ${def[0]!.delta} within ±1 % of 0.175`);
    close(domainScore(w, spawned.agentId, 'default'), 0.225, 1e-6);

    // A domain where the parent has no evidence: its score is neutral 0.5, so the seed is 0.35.
    await work(w, scout, await oneTask(w, { billing_code: 'infra' }));
    const infra = evidenceOf(w.f, spawned.agentId).filter((r) => r.domain === 'infra');
    assert.equal(infra[0]!.ref, `seed_from_parent:${parent.configHash}`);
    close(infra[0]!.delta, 0.35);
    // Seeds come once per domain.
    await work(w, scout, await oneTask(w, { billing_code: 'infra' }));
    assert.equal(
      evidenceOf(w.f, spawned.agentId).filter((r) => r.domain === 'infra' && r.ref.startsWith('seed')).length,
      1,
    );
  });

  it('ledger_test SeedFromParent_70Percent: parent ≈ 0.8 → child ≈ 0.56 from its seed row', async (t) => {
    const w = await world(t);
    const parent = agentRow(w.f, w.ids.worker);
    recordEvidence(w.f.app, parent, 'default', 0.3, 'test:parent earns', owner(w));
    close(domainScore(w, parent.agentId, 'default'), 0.8, 0.01);
    const child = w.f.addAgent('child', { parentId: parent.agentId, spawnDepth: 1 });
    recordEvidence(w.f.app, agentRow(w.f, child.agentId), 'default', 0, 'test:a neutral first verdict', owner(w));
    const rows = evidenceOf(w.f, child.agentId);
    assert.deepEqual(
      rows.map((r) => [r.ref, r.weight]),
      [
        [`seed_from_parent:${parent.configHash}`, 1],
        ['test:a neutral first verdict', 1],
      ],
    );
    close(domainScore(w, child.agentId, 'default'), 0.56, 0.01);
    close(rows[0]!.delta, 0.56, 0.0056, 'the seed within ±1 %:');
  });

  it("a root agent's first evidence in a new domain is preceded by a 0.5 bootstrap seed", async (t) => {
    const w = await world(t);
    await work(w, w.worker, await oneTask(w, { billing_code: 'billing-x' }));
    assert.deepEqual(
      evidenceOf(w.f, w.ids.worker).map((r) => [r.domain, r.delta, r.ref.split(' ')[0]!.replace(/\d+$/, 'N')]),
      [
        ['default', 0.5, 'seed:bootstrap'],
        ['billing-x', 0.5, 'seed:bootstrap'],
        ['billing-x', 0.05, 'task:N'],
      ],
    );
  });
});

describe('verdicts are evidence for the assignee', () => {
  it("approve: +0.1 from a peer, +0.05 when automatic, in the task's billing-code domain; the verifier gets nothing", async (t) => {
    const w = await world(t);
    const peerTask = await oneTask(w, { billing_code: 'docs', ...peer(w) });
    await work(w, w.worker, peerTask, 'approve');
    const autoTask = await oneTask(w, { billing_code: 'infra' });
    await work(w, w.worker, autoTask);
    const plain = await oneTask(w);
    await work(w, w.worker, plain);
    const rows = evidenceOf(w.f, w.ids.worker).map((r) => [r.domain, r.delta, r.ref]);
    assert.deepEqual(rows, [
      ['default', 0.5, 'seed:bootstrap'],
      ['docs', 0.5, 'seed:bootstrap'],
      ['docs', 0.1, `task:${peerTask} verified=peer:reviewer verdict=approve`],
      ['infra', 0.5, 'seed:bootstrap'],
      ['infra', 0.05, `task:${autoTask} verified=auto:system verdict=approve`],
      ['default', 0.05, `task:${plain} verified=auto:system verdict=approve`],
    ]);
    const r = reputation(w, w.ids.worker);
    assert.deepEqual(
      r.domains.map((d) => d.domain),
      ['default', 'docs', 'infra'],
    );
    close(r.domains[0]!.score, 0.55);
    close(r.domains[1]!.score, 0.6);
    close(r.domains[2]!.score, 0.55);
    close(r.rollingScore, (0.55 + 0.6 + 0.55) / 3);
    assert.equal(r.evidenceCount, 6);
    assert.deepEqual(
      evidenceOf(w.f, w.ids.reviewer).map((x) => x.ref),
      ['seed:bootstrap'],
      'the verifier earns nothing',
    );
  });

  it("the evidence is recorded in the verdict's own transaction and keyed by the assignee's config hash", async (t) => {
    const w = await world(t);
    const id = await oneTask(w, peer(w));
    await work(w, w.worker, id, 'reject');
    const log = events(w.f);
    const verified = log.find((e) => e.type === 'TaskVerified' && (e.data as Body).taskId === id)!;
    const evidence = log.filter((e) => e.type === 'EvidenceRecorded' && e.meta.commandId === verified.meta.commandId);
    assert.deepEqual(
      evidence.map((e) => [e.streamId, (e.data as Body).delta, (e.data as Body).configHash]),
      [[`agent-${w.ids.worker}`, -0.2, agentRow(w.f, w.ids.worker).configHash]],
    );
    assert.equal(evidence[0]!.meta.actor, 'agent:reviewer');
  });
});

describe('quarantine on low reputation', () => {
  it('peer rejections quarantine the agent exactly when its mean falls below 0.3; the owner is DMed; it may only read', async (t) => {
    const w = await world(t);
    // 0.5 − 0.2 = 0.3: exactly at the threshold, nothing happens.
    await work(w, w.worker, await oneTask(w, peer(w)), 'reject');
    close(reputation(w, w.ids.worker).rollingScore, 0.3);
    assert.equal(agentRow(w.f, w.ids.worker).quarantined, false);
    assert.equal(events(w.f).filter((e) => e.type === 'AgentQuarantined').length, 0);
    const ownerDmsBefore = (await inbox(w.owner)).filter((m) => m.metadata?.event === 'AgentQuarantined');
    assert.deepEqual(ownerDmsBefore, []);

    // The second rejection: 0.1 < 0.3 → quarantined in the same transaction as the evidence.
    const second = await oneTask(w, peer(w));
    await work(w, w.worker, second, 'reject');
    const a = agentRow(w.f, w.ids.worker);
    assert.equal(a.quarantined, true);
    assert.equal(a.quarantineReason, 'reputation=0.10 below 0.3');
    assert.equal(a.quarantinedAt, now(w));
    const log = events(w.f);
    const q = log.filter((e) => e.type === 'AgentQuarantined');
    assert.equal(q.length, 1);
    const evidence = log.filter((e) => e.type === 'EvidenceRecorded' && e.streamId === `agent-${w.ids.worker}`).at(-1)!;
    assert.equal(q[0]!.streamId, `agent-${w.ids.worker}`);
    assert.equal(q[0]!.position, evidence.position + 1, 'the check runs right after the evidence');
    assert.equal(q[0]!.meta.commandId, evidence.meta.commandId, 'one command');
    assert.deepEqual(q[0]!.data, {
      agentId: w.ids.worker,
      reason: 'reputation=0.10 below 0.3',
      score: 0.1,
      threshold: 0.3,
    });

    const dms = (await inbox(w.owner)).filter((m) => m.metadata?.event === 'AgentQuarantined');
    assert.equal(dms.length, 1);
    assert.equal(dms[0]!.metadata!.agent_id, w.ids.worker);
    assert.match(dms[0]!.body, /Agent worker was quarantined: reputation=0\.10 below 0\.3/);
    assert.match(dms[0]!.body, /unquarantine_agent/);

    // Quarantined: a claim is refused and nothing changes; so is every write tool, while read tools work.
    const next = await oneTask(w);
    await refused(w.f, w.worker, 'claim_task', { task_id: next }, 'ErrAgentQuarantined');
    await refused(w.f, w.worker, 'send_message', { to: 'owner', body: 'let me work' }, 'ErrAgentQuarantined');
    await refused(
      w.f,
      w.worker,
      'create_goal',
      { title: 'A goal of my own', description: 'I will do it myself' },
      'ErrAgentQuarantined',
    );
    await refused(w.f, w.worker, 'read_inbox', {}, 'ErrAgentQuarantined');
    const me = await ok(w.worker, 'whoami');
    assert.equal(me.name, 'worker');
    await ok(w.worker, 'list_goals');
    await ok(w.worker, 'my_status');
    await ok(w.worker, 'list_channels');
    const goalId = ((await ok(w.worker, 'list_goals')).goals as Body[])[0]!.id;
    await ok(w.worker, 'get_goal', { goal_id: goalId });
    // The claim refusal also holds below the pipeline, in the task decider.
    const head = w.f.app.engine.head().position;
    assert.throws(
      () => claimTask(w.f.app, speaker(authenticate(w.f.app, w.f.agentToken)!), next, { actor: 'agent:worker' }),
      (e: unknown) => isDomainError(e) && e.code === 'ErrAgentQuarantined',
    );
    assert.equal(w.f.app.engine.head().position, head);

    // A further rejection (a run that finishes while quarantined) is still recorded, without a second quarantine.
    const before = evidenceOf(w.f, w.ids.worker).length;
    recordEvidence(w.f.app, agentRow(w.f, w.ids.worker), 'default', -0.2, 'test:a late verdict', owner(w));
    assert.equal(evidenceOf(w.f, w.ids.worker).length, before + 1);
    assert.equal(events(w.f).filter((e) => e.type === 'AgentQuarantined').length, 1);
    assert.equal((await inbox(w.owner)).filter((m) => m.metadata?.event === 'AgentQuarantined').length, 1);
    // Other agents are unaffected.
    await work(w, w.reviewer, next);
  });

  it('the quarantine is a fact in the log: a rebuild of the projections reproduces it and the evidence', async (t) => {
    const w = await world(t);
    recordEvidence(w.f.app, agentRow(w.f, w.ids.worker), 'default', -0.3, 'test:bad', owner(w));
    assert.equal(agentRow(w.f, w.ids.worker).quarantined, true);
    const dump = () => [
      w.f.app.engine.db.prepare('SELECT * FROM agents ORDER BY agent_id').all(),
      w.f.app.engine.db.prepare('SELECT * FROM evidence ORDER BY position').all(),
    ];
    const incremental = dump();
    w.f.app.engine.rebuild();
    assert.deepEqual(dump(), incremental);
    assert.equal(agentRow(w.f, w.ids.worker).quarantined, true);
  });

  it('time decay alone never quarantines: a year without evidence leaves the agent active', async (t) => {
    const w = await world(t);
    w.clock.advance(365 * DAY);
    const r = reputation(w, w.ids.worker);
    assert.ok(r.rollingScore < 0.001, `the seed has decayed to ${r.rollingScore}`);
    assert.equal(r.quarantined, false);
    assert.equal(agentRow(w.f, w.ids.worker).quarantined, false);
    await ok(w.worker, 'send_message', { to: 'owner', body: 'still here' });
    // Nor does a good verdict after the idle year (it raises the score; it is not a reason to quarantine).
    await work(w, w.worker, await oneTask(w, peer(w)), 'approve');
    close(reputation(w, w.ids.worker).rollingScore, 0.1 + 0.5 * 2 ** (-365 / 30), 1e-6);
    assert.equal(agentRow(w.f, w.ids.worker).quarantined, false);
    assert.equal(events(w.f).filter((e) => e.type === 'AgentQuarantined').length, 0);
    // A bad verdict is evidence, and the check runs on it.
    await work(w, w.worker, await oneTask(w, peer(w)), 'reject');
    assert.equal(agentRow(w.f, w.ids.worker).quarantined, true);
  });
});

describe('unquarantine_agent (owner surface)', () => {
  async function quarantined(w: World): Promise<void> {
    await work(w, w.worker, await oneTask(w, peer(w)), 'reject');
    await work(w, w.worker, await oneTask(w, peer(w)), 'reject');
    assert.equal(agentRow(w.f, w.ids.worker).quarantined, true);
  }

  it('only owners see and call it; it lifts the quarantine, leaves reputation unchanged, and the agent can claim again', async (t) => {
    const w = await world(t);
    await quarantined(w);
    const agentTools = (await w.worker.listTools()).tools.map((x) => x.name);
    assert.ok(!agentTools.includes('unquarantine_agent'), 'not on the agent surface');
    assert.ok((await w.owner.listTools()).tools.some((x) => x.name === 'unquarantine_agent'));
    await refused(w.f, w.worker, 'unquarantine_agent', { agent_id: w.ids.worker }, 'ErrToolNotFound');
    await refused(w.f, w.reviewer, 'unquarantine_agent', { agent_id: w.ids.worker }, 'ErrToolNotFound');
    const stranger = await w.f.connect(w.f.addOwner('other-owner').token);
    await refused(w.f, stranger, 'unquarantine_agent', { agent_id: w.ids.worker }, 'ErrNotFound');
    await refused(w.f, w.owner, 'unquarantine_agent', { agent_id: 999 }, 'ErrNotFound');
    await refused(w.f, w.owner, 'unquarantine_agent', { agent_id: w.ids.worker, extra: true }, 'ErrInvalidInput');

    const before = reputation(w, w.ids.worker);
    const lifted = await ok(w.owner, 'unquarantine_agent', { agent_id: w.ids.worker });
    assert.deepEqual(lifted, { agent_id: w.ids.worker, status: 'active', rolling_score: before.rollingScore });
    const after = reputation(w, w.ids.worker);
    assert.deepEqual({ ...after, quarantined: true }, before, 'reputation unchanged');
    const a = agentRow(w.f, w.ids.worker);
    assert.deepEqual([a.quarantined, a.quarantineReason, a.quarantinedAt], [false, null, null]);
    const e = events(w.f).at(-1)!;
    assert.deepEqual(
      [e.type, e.data, e.meta.actor],
      ['AgentUnquarantined', { agentId: w.ids.worker, by: 'user:owner' }, 'user:owner'],
    );

    // Lifting again changes nothing.
    await refusedNothing(w, () => ok(w.owner, 'unquarantine_agent', { agent_id: w.ids.worker }));
    // It may claim (and write) again; a good verdict does not re-quarantine it (its score rises to 0.2)…
    await work(w, w.worker, await oneTask(w, peer(w)), 'approve');
    close(reputation(w, w.ids.worker).rollingScore, 0.2);
    assert.equal(agentRow(w.f, w.ids.worker).quarantined, false);
    // …but the next bad verdict does.
    await work(w, w.worker, await oneTask(w, peer(w)), 'reject');
    assert.equal(agentRow(w.f, w.ids.worker).quarantined, true);
    assert.equal((await inbox(w.owner)).filter((m) => m.metadata?.event === 'AgentQuarantined').length, 2);
  });

  async function refusedNothing(w: World, call: () => Promise<Body>): Promise<void> {
    const head = w.f.app.engine.head().position;
    const body = await call();
    assert.equal(body.status, 'active');
    assert.equal(w.f.app.engine.head().position, head, 'a no-op appends nothing');
  }

  it('on an agent that is not quarantined it is a no-op', async (t) => {
    const w = await world(t);
    await refusedNothing(w, () => ok(w.owner, 'unquarantine_agent', { agent_id: w.ids.worker }));
  });
});

describe('settings from the environment', () => {
  const NAMES = [
    'COLONY_REPUTATION_HALF_LIFE_DAYS',
    'COLONY_QUARANTINE_THRESHOLD',
    'COLONY_REPUTATION_DELTAS',
  ] as const;
  const setEnv = (t: TestContext, values: Partial<Record<(typeof NAMES)[number], string>>): void => {
    const saved = Object.fromEntries(NAMES.map((n) => [n, process.env[n]]));
    t.after(() => {
      for (const n of NAMES) {
        if (saved[n] === undefined) delete process.env[n];
        else process.env[n] = saved[n];
      }
    });
    for (const n of NAMES) delete process.env[n];
    Object.assign(process.env, values);
  };

  it('defaults: half-life 30 days, threshold 0.3, peer/command +0.1, auto +0.05, reject −0.2', () => {
    assert.deepEqual(reputationSettings({}), {
      halfLifeDays: 30,
      threshold: 0.3,
      deltas: { peer: 0.1, command: 0.1, auto: 0.05, owner: 0.1, reject: -0.2 },
    });
    assert.deepEqual(
      reputationSettings({
        COLONY_REPUTATION_HALF_LIFE_DAYS: '',
        COLONY_QUARANTINE_THRESHOLD: '',
        COLONY_REPUTATION_DELTAS: '',
      }),
      reputationSettings({}),
    );
  });

  it('parses overrides, and refuses bad values with ErrInvalidConfig', () => {
    assert.deepEqual(
      reputationSettings({
        COLONY_REPUTATION_HALF_LIFE_DAYS: '7.5',
        COLONY_QUARANTINE_THRESHOLD: '0.45',
        COLONY_REPUTATION_DELTAS: 'reject=-0.5,auto=0.01',
      }),
      { halfLifeDays: 7.5, threshold: 0.45, deltas: { peer: 0.1, command: 0.1, auto: 0.01, owner: 0.1, reject: -0.5 } },
    );
    for (const env of [
      { COLONY_REPUTATION_HALF_LIFE_DAYS: '0' },
      { COLONY_REPUTATION_HALF_LIFE_DAYS: '-3' },
      { COLONY_REPUTATION_HALF_LIFE_DAYS: 'soon' },
      { COLONY_QUARANTINE_THRESHOLD: '1.5' },
      { COLONY_QUARANTINE_THRESHOLD: '-0.1' },
      { COLONY_QUARANTINE_THRESHOLD: 'NaN' },
      { COLONY_REPUTATION_DELTAS: 'bonus=1' },
      { COLONY_REPUTATION_DELTAS: 'reject' },
      { COLONY_REPUTATION_DELTAS: 'reject=lots' },
      { COLONY_REPUTATION_DELTAS: '=0.1' },
    ]) {
      assert.throws(
        () => reputationSettings(env),
        (e: unknown) => isDomainError(e) && e.code === 'ErrInvalidConfig',
        JSON.stringify(env),
      );
    }
  });

  it('the running app uses them: a custom reject delta and threshold quarantine at once; the half-life sets the decay', async (t) => {
    setEnv(t, {
      COLONY_REPUTATION_DELTAS: 'reject=-0.25,peer=0.3',
      COLONY_QUARANTINE_THRESHOLD: '0.26',
      COLONY_REPUTATION_HALF_LIFE_DAYS: '10',
    });
    const w = await world(t);
    await work(w, w.worker, await oneTask(w, peer(w)), 'reject');
    close(reputation(w, w.ids.worker).rollingScore, 0.25);
    const a = agentRow(w.f, w.ids.worker);
    assert.equal(a.quarantined, true);
    assert.equal(a.quarantineReason, 'reputation=0.25 below 0.26');
    w.clock.advance(10 * DAY);
    close(reputation(w, w.ids.worker).rollingScore, 0.125, 1e-6);
    // A peer approval is +0.3 for another agent.
    const helper = w.f.addAgent('helper');
    await work(w, await w.f.connect(helper.token), await oneTask(w, peer(w)), 'approve');
    close(reputation(w, helper.agentId).rollingScore, 0.8);
  });
});

describe('GET /api/agents/:id/reputation over real sockets', () => {
  let f: HttpFixture;
  let otherToken: string;
  let otherAgentId: number;
  before(async () => {
    f = await httpFixture({ agentTools: ['whoami'] });
    const other = createOwner(f.app, 'other-owner', { actor: 'system' });
    otherToken = other.token;
    otherAgentId = registerAgent(
      f.app,
      {
        name: 'theirs',
        ownerId: other.userId,
        model: 'm',
        systemPrompt: 'Theirs.',
        toolScope: ['whoami'],
        tier: 'supervised',
        command: null,
        parentId: null,
        spawnDepth: 0,
      },
      { actor: 'user:other-owner' },
    ).agentId;
  });
  after(() => f.close());

  const get = (path: string, token: string | null = f.ownerToken) =>
    fetch(`${f.base}/api${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  async function fails(path: string, status: number, code: string | null, token?: string | null): Promise<void> {
    const head = f.eventCount();
    const res = await get(path, token);
    assert.equal(res.status, status, path);
    if (code) assert.equal(((await res.json()) as { error: { code: string } }).error.code, code);
    assert.equal(f.eventCount(), head);
  }

  it('returns {config_hash, rolling_score, evidence_count, last_evidence_at} with the domains', async () => {
    const agent = getAgent(f.app.engine.db, f.agentId)!;
    // The server runs on the system clock: the seed has decayed by a hair since it was recorded.
    const fresh = (await (await get(`/agents/${f.agentId}/reputation`)).json()) as Body;
    assert.ok(Math.abs((fresh.rolling_score as number) - 0.5) < 1e-4, String(fresh.rolling_score));
    const seedAt = readAll(f.app.engine.db, { limit: 100_000 }).find((e) => e.type === 'EvidenceRecorded')!.recordedAt;
    assert.deepEqual(
      { ...fresh, rolling_score: 0.5, domains: (fresh.domains as Body[]).map((d) => ({ ...d, score: 0.5 })) },
      {
        config_hash: agent.configHash,
        rolling_score: 0.5,
        evidence_count: 1,
        last_evidence_at: seedAt,
        quarantined: false,
        domains: [{ domain: 'default', score: 0.5, evidence_count: 1, last_evidence_at: seedAt }],
      },
    );
    recordEvidence(f.app, agent, 'docs', 0.1, 'test:docs', { actor: 'user:owner' });
    const res = await get(`/agents/${f.agentId}/reputation`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    const body = (await res.json()) as {
      config_hash: string;
      rolling_score: number;
      evidence_count: number;
      last_evidence_at: string;
      domains: Body[];
    };
    const expected = reputationOf(f.app, getAgent(f.app.engine.db, f.agentId)!);
    assert.equal(body.config_hash, agent.configHash);
    assert.match(body.config_hash, /^[0-9a-f]{64}$/);
    assert.equal(body.evidence_count, 3);
    assert.ok(
      Math.abs(body.rolling_score - expected.rollingScore) < 1e-6 && body.rolling_score > 0.5,
      String(body.rolling_score),
    );
    const lastEvidence = readAll(f.app.engine.db, { limit: 100_000 })
      .filter((e) => e.type === 'EvidenceRecorded')
      .at(-1)!;
    assert.equal(body.last_evidence_at, lastEvidence.recordedAt);
    assert.deepEqual(
      body.domains.map((d) => [d.domain, d.evidence_count]),
      [
        ['default', 1],
        ['docs', 2],
      ],
    );
  });

  it("another tenant's agent and an unknown id are 404, an agent token 403, no token 401, a bad id 400", async () => {
    await fails(`/agents/${otherAgentId}/reputation`, 404, 'ErrNotFound');
    await fails(`/agents/${f.agentId}/reputation`, 404, 'ErrNotFound', otherToken);
    const theirs = await get(`/agents/${otherAgentId}/reputation`, otherToken);
    assert.equal(theirs.status, 200, 'their own agent is visible to them');
    await fails('/agents/999/reputation', 404, 'ErrNotFound');
    await fails(`/agents/${f.agentId}/reputation`, 403, null, f.agentToken);
    await fails(`/agents/${f.agentId}/reputation`, 401, null, null);
    await fails('/agents/abc/reputation', 400, 'ErrInvalidInput');
    await fails('/agents/0/reputation', 400, 'ErrInvalidInput');
  });
});
