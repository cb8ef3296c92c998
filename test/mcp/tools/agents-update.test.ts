import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fixedClock } from '../../../src/clock.js';
import { getAgent } from '../../../src/projections/principal-queries.js';
import { scoreOf } from '../../../src/projections/reputation.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';
import { ok } from '../../helpers/calls.js';

/**
 * Config updates, also for an agent with work in flight: update_agent
 * gives a new config hash seeded at 70 % of the old hash's score in each domain; a tier-only change keeps
 * the hash; a verdict on work claimed under the old config is evidence for the old config.
 */
for (const name of ['COLONY_REPUTATION_HALF_LIFE_DAYS', 'COLONY_QUARANTINE_THRESHOLD', 'COLONY_REPUTATION_DELTAS'])
  delete process.env[name];
const T0 = '2026-03-01T09:00:00.000Z';

async function world(t: TestContext): Promise<{ f: McpFixture; owner: Client; worker: Client; taskIds: number[] }> {
  const f = await mcpFixture({ clock: fixedClock(T0) });
  t.after(() => f.close());
  const owner = await f.connect(f.ownerToken);
  const worker = await f.connect(f.agentToken);
  const g = await ok(owner, 'create_goal', {
    title: 'Update configs',
    description: 'Work done across a config change',
    approval_mode: 'auto',
    require_evidence: false, // an auto verifier's approval is the evidence these tests count
  });
  const p = await ok(owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: {
      title: 'Root of the work',
      description: 'Parent of the parts below',
      billing_code: 'docs',
      children: [
        { title: 'Part one', description: 'The first part of the work' },
        { title: 'Part two', description: 'The second part of the work' },
      ],
    },
  });
  return { f, owner, worker, taskIds: (p.task_ids as number[]).slice(1) };
}

const score = (f: McpFixture, hash: string, domain: string) =>
  scoreOf(f.app.engine.db, f.owner.userId, hash, domain, f.app.engine.clock().toISOString(), 30);

describe('update_agent', () => {
  it('a prompt change gives a new hash seeded at 70 % of the old score in each domain (within ±1 %)', async (t) => {
    const { f, owner, worker, taskIds } = await world(t);
    await ok(worker, 'claim_task', { task_id: taskIds[0] });
    await ok(worker, 'complete_task', { task_id: taskIds[0], summary: 'done' }); // auto: +0.05 in docs after the docs seed
    const old = getAgent(f.app.engine.db, f.agent.agentId)!.configHash;
    const before = { default: score(f, old, 'default').score, docs: score(f, old, 'docs').score };
    const r = await ok(owner, 'update_agent', {
      agent_id: f.agent.agentId,
      system_prompt: 'You are the worker, now with a stricter review checklist.',
    });
    assert.equal(r.hash_changed, true);
    assert.equal(r.previous_hash, old);
    assert.notEqual(r.config_hash, old);
    assert.match(r.config_hash as string, /^[0-9a-f]{64}$/);
    for (const domain of ['default', 'docs'] as const) {
      const seeded = score(f, r.config_hash as string, domain);
      assert.equal(seeded.evidenceCount, 1, `one seed row in ${domain}`);
      assert.ok(
        Math.abs(seeded.score - 0.7 * before[domain]) <= 0.01 * 0.7 * before[domain],
        `${domain}: ${seeded.score} ≈ 0.7 × ${before[domain]}`,
      );
    }
    assert.equal(score(f, old, 'docs').evidenceCount, 2, 'the old hash keeps its evidence');
  });

  it('a tier-only change keeps the hash and adds no evidence; owners only; bad input appends nothing', async (t) => {
    const { f, owner, worker } = await world(t);
    const head = f.app.engine.head().position;
    const r = await ok(owner, 'update_agent', { agent_id: f.agent.agentId, autonomy_tier: 'assisted' });
    assert.equal(r.hash_changed, false);
    assert.equal(getAgent(f.app.engine.db, f.agent.agentId)!.tier, 'assisted');
    assert.equal(f.app.engine.head().position, head + 1, 'one AgentConfigUpdated, no seed');
    const tools = (await worker.listTools()).tools.map((x) => x.name);
    assert.ok(!tools.includes('update_agent'), 'owner surface only');
    for (const args of [
      { agent_id: f.agent.agentId, system_prompt: 'too short' },
      { agent_id: f.agent.agentId, tool_scope: [] },
      { agent_id: 9999, model: 'x' },
      { agent_id: f.agent.agentId, colour: 'red' },
    ]) {
      const at = f.app.engine.head().position;
      const res = await callTool(owner, 'update_agent', args);
      assert.equal(res.result.isError, true, JSON.stringify(args));
      assert.match(textOf(res.result), /^Err(InvalidInput|NotFound): /);
      assert.equal(f.app.engine.head().position, at);
    }
  });

  it('a verdict on work claimed before the update is evidence for the old config', async (t) => {
    const { f, owner, worker, taskIds } = await world(t);
    const old = getAgent(f.app.engine.db, f.agent.agentId)!.configHash;
    await ok(worker, 'claim_task', { task_id: taskIds[1] });
    const r = await ok(owner, 'update_agent', { agent_id: f.agent.agentId, model: 'a-newer-model' });
    await ok(worker, 'complete_task', { task_id: taskIds[1], summary: 'finished after the update' });
    const oldDocs = score(f, old, 'docs');
    assert.equal(oldDocs.evidenceCount, 2, 'seed + the auto approval, under the old hash');
    assert.equal(score(f, r.config_hash as string, 'docs').evidenceCount, 0, 'nothing for the new config yet');
    await ok(worker, 'claim_task', { task_id: taskIds[0] });
    await ok(worker, 'complete_task', { task_id: taskIds[0], summary: 'claimed after the update' });
    assert.equal(
      score(f, r.config_hash as string, 'docs').evidenceCount,
      2,
      'work claimed under the new config: seed + approval for the new hash',
    );
  });
});
