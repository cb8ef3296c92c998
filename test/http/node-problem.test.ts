import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NodeProblem } from '../../src/mcp/context.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * A node that cannot follow its store (a PostgreSQL node's follower failing: test/cli/serve-node-health.test.ts
 * makes one for real) says so wherever someone looks, not only in its log: `GET /health` (503), the owner's
 * "Needs you" list (`GET /api/attention`, counted in its total) and system_health over MCP — each with the
 * fixed reason, the code, since when and how many attempts, and none of it once the node follows again.
 * Here the follower's report is set on the serving process's context (`node.follow`), the one thing
 * `colony serve` wires. A failed sync's stop: writes-stopped.test.ts.
 */
const PROBLEM: NodeProblem = {
  kind: 'follow',
  reason: 'this node cannot bring in other nodes’ events from the store: what it shows may be behind',
  code: 'ErrChainBroken',
  since: new Date('2026-12-07T10:00:00.000Z'),
  attempts: 7,
};
const VIEW = {
  kind: 'follow',
  reason: PROBLEM.reason,
  code: 'ErrChainBroken',
  since: '2026-12-07T10:00:00.000Z',
  attempts: 7,
};

let f: HttpFixture;
before(async () => {
  f = await httpFixture({ agentTools: ['whoami', 'system_health'] });
});
after(async () => {
  f.ctx.node.follow = () => null;
  await f?.close();
});

async function attention(token: string): Promise<{ counts: Record<string, number>; node: unknown }> {
  const res = await fetch(`${f.base}/api/attention`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  return (await res.json()) as { counts: Record<string, number>; node: unknown };
}

async function systemHealth(token: string): Promise<{ data: Record<string, unknown>; text: string }> {
  const client = await f.connect(token);
  const result = await client.callTool({ name: 'system_health', arguments: {} });
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
  return { data: result.structuredContent as Record<string, unknown>, text };
}

describe('a node that cannot follow its store', () => {
  it('is healthy everywhere while nothing is wrong', async () => {
    const res = await fetch(`${f.base}/health`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { status: string }).status, 'ok');
    const a = await attention(f.ownerToken);
    assert.deepEqual([a.node, a.counts.node, a.counts.total], [null, 0, 0]);
    const h = await systemHealth(f.ownerToken);
    assert.equal(h.data.status, 'ok');
    assert.equal(h.data.node, undefined);
    assert.doesNotMatch(h.text, /node: DEGRADED/);
  });

  it('is on /health, in the owner’s "Needs you" with its count, and in system_health for the owner and agents', async () => {
    f.ctx.node.follow = () => PROBLEM;
    const res = await fetch(`${f.base}/health`);
    assert.equal(res.status, 503);
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual({ ...body, position: undefined }, { status: 'degraded', position: undefined, ...VIEW });

    const a = await attention(f.ownerToken);
    assert.deepEqual(a.node, VIEW);
    assert.equal(a.counts.node, 1);
    assert.equal(a.counts.total, 1, 'the total the navigation shows counts it');

    for (const token of [f.ownerToken, f.agentToken]) {
      const h = await systemHealth(token);
      assert.equal(h.data.status, 'degraded');
      assert.deepEqual(h.data.node, VIEW);
      assert.match(
        h.text,
        /^- node: DEGRADED since 2026-12-07T10:00:00\.000Z \(ErrChainBroken, 7 attempts\): this node cannot bring in/m,
      );
    }
  });

  it('leaves every view once the node follows again', async () => {
    f.ctx.node.follow = () => PROBLEM;
    assert.equal((await attention(f.ownerToken)).counts.node, 1);
    f.ctx.node.follow = () => null;
    assert.equal((await fetch(`${f.base}/health`)).status, 200);
    const a = await attention(f.ownerToken);
    assert.deepEqual([a.node, a.counts.node, a.counts.total], [null, 0, 0]);
    assert.equal((await systemHealth(f.agentToken)).data.status, 'ok');
  });
});
