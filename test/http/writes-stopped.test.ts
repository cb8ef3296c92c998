import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fixedClock } from '../../src/clock.js';
import { failSync } from '../helpers/failed-sync.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';

/**
 * A sync the disk did not confirm stops all writing (src/engine/wal-sync.ts), and that is said wherever
 * someone looks, not only in the log and to each refused writer: `GET /health` (503 `degraded`, kind
 * `writes_stopped`), the owner's "Needs you" (`GET /api/attention`, counted in its total) and system_health
 * over MCP for the owner and agents — a fixed sentence, never the error's text, since when, and how many
 * writes were refused since. The one fault injected is the disk's (helpers/failed-sync.ts); the console's
 * card: test/web/writes-stopped.test.ts.
 */
const FAILED_AT = '2026-12-08T03:00:00.000Z';
let f: HttpFixture;
let restore = () => {};

before(async () => {
  f = await httpFixture({ agentTools: ['whoami', 'system_health'], clock: fixedClock(FAILED_AT) });
});
after(async () => {
  restore();
  await f?.close();
});

async function health(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${f.base}/health`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function attention(): Promise<{ counts: Record<string, number>; node: Record<string, unknown> | null }> {
  const res = await fetch(`${f.base}/api/attention`, { headers: { authorization: `Bearer ${f.ownerToken}` } });
  assert.equal(res.status, 200);
  return (await res.json()) as { counts: Record<string, number>; node: Record<string, unknown> | null };
}

async function call(token: string, name: string, args: Record<string, unknown>) {
  const client = await f.connect(token);
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
  return { isError: result.isError === true, data: result.structuredContent as Record<string, unknown>, text };
}

describe('writes stopped by a sync the disk did not confirm', () => {
  it('is not shown while every sync succeeds', async () => {
    assert.equal((await health()).status, 200);
    assert.equal((await attention()).node, null);
  });

  it('is on /health, in "Needs you" with its count and in system_health, with every refused write counted', async () => {
    restore = await failSync(f.app);

    const h = await health();
    assert.equal(h.status, 503);
    assert.deepEqual(
      { ...h.body, position: undefined, reason: undefined },
      {
        status: 'degraded',
        position: undefined,
        kind: 'writes_stopped',
        code: 'ErrWritesStopped',
        since: FAILED_AT,
        attempts: 0,
        reason: undefined,
      },
    );
    assert.match(String(h.body.reason), /^the disk did not confirm a write: Colony takes no more writes/);
    assert.equal(h.body.position, f.app.engine.head().position - 2, 'the log it serves ends before the lost batch');
    assert.doesNotMatch(String(h.body.reason), /EBADF|bad file descriptor/i, 'no error text where no token is needed');

    const refused = await call(f.ownerToken, 'create_goal', {
      title: 'After the failure',
      description: 'Written once the disk failed.',
    });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /ErrWritesStopped/);

    const a = await attention();
    assert.equal(a.node?.kind, 'writes_stopped');
    assert.equal(a.node?.attempts, 1, 'the refused create_goal');
    assert.equal(a.counts.node, 1);
    assert.equal(a.counts.total, 1, 'the total the navigation shows counts it');

    for (const token of [f.ownerToken, f.agentToken]) {
      const s = await call(token, 'system_health', {});
      assert.equal(s.isError, false, s.text);
      assert.equal(s.data.status, 'degraded');
      assert.equal((s.data.node as { kind: string }).kind, 'writes_stopped');
      assert.match(
        s.text,
        /^- writes: STOPPED since 2026-12-08T03:00:00\.000Z \(ErrWritesStopped, 1 refused\): the disk/m,
      );
    }
  });
});
