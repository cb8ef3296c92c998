import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { colonyLive, colonyOk, stdioClient } from '../helpers/cli.js';
import { pgRaw, pgScratch, pgSkip } from '../helpers/pg.js';

/**
 * A `colony serve` node on a PostgreSQL store whose follower cannot bring other nodes' events in (here:
 * the store's recorded head names rows it does not hold — rows removed behind its back) says so once in
 * its log, as an error, answers `GET /health` with 503 `degraded` while it lasts — and so do the owner's
 * "Needs you" list and system_health (of a `colony stdio` node of the tenant too) — and says once that it
 * follows again when the store is mended.
 */
const TENANT = 'acme';

async function health(base: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/health`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function until<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    assert.ok(Date.now() < deadline, `${what}: not seen in 20 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a serving node whose follower fails', { skip: pgSkip }, () => {
  it('logs it once as an error, is degraded on /health while it lasts, and logs its recovery once', async (t) => {
    const scratch = pgScratch();
    const dir = tempDir();
    const url = `${scratch.url}&tenant=${TENANT}`;
    const { token } = JSON.parse(colonyOk(['--store', url, 'init', '--data', dir.dir, '--json'])) as { token: string };
    const live = colonyLive(['--store', url, 'serve', '--data', dir.dir, '--port', '0', '--sandbox', 'off']);
    const raw = await pgRaw(scratch);
    let stdio: Awaited<ReturnType<typeof stdioClient>> | null = null;
    t.after(async () => {
      live.proc.kill('SIGKILL');
      await stdio?.close(); // before its schema goes
      await raw.end();
      await scratch.drop();
      dir.cleanup();
    });
    const base = (await live.waitFor(/listening on http/, 'stderr')).match(/http:\/\/[\d.:]+/)![0];
    // A stdio node of the same tenant (an MCP client's), started while the store is whole.
    stdio = await stdioClient(dir.dir, token, undefined, { COLONY_STORE: url });
    const before = await health(base);
    assert.deepEqual([before.status, before.body.status], [200, 'ok']);
    const failing = () => live.stderrLines.filter((l) => l.includes('cannot bring in other nodes’ events'));

    // The store's head moves 3 past its rows; the NOTIFY wakes the follower (the poll would within a second).
    await raw.query('UPDATE es_chains SET position = position + 3 WHERE tenant = $1', [TENANT]);
    await raw.query(`NOTIFY colony_events, '${TENANT}'`);
    const degraded = await until('503 degraded', async () => {
      const h = await health(base);
      return h.status === 503 ? h : null;
    });
    assert.equal(degraded.body.status, 'degraded');
    assert.equal(degraded.body.code, 'ErrChainBroken');
    assert.equal(degraded.body.position, before.body.position, 'it serves what it had');
    assert.match(String(degraded.body.reason), /cannot bring in other nodes’ events/);
    assert.doesNotMatch(
      JSON.stringify(degraded.body),
      /is not there|acme/,
      'no error text on an endpoint without a token',
    );
    // The owner hears of it where they look: "Needs you" (counted) and system_health, by code, without the error's text.
    const auth = { authorization: `Bearer ${token}` };
    const needs = (await (await fetch(`${base}/api/attention`, { headers: auth })).json()) as {
      counts: { node: number };
      node: { code: string } | null;
    };
    assert.deepEqual([needs.counts.node, needs.node?.code], [1, 'ErrChainBroken']);
    const client = new Client({ name: 'health', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: auth } }));
    const sys = (await client.callTool({ name: 'system_health', arguments: {} })).structuredContent as {
      status: string;
      node?: { code: string };
    };
    await client.close();
    assert.deepEqual([sys.status, sys.node?.code], ['degraded', 'ErrChainBroken']);
    const stdioHealth = async () =>
      (await stdio!.callTool({ name: 'system_health', arguments: {} })).structuredContent as typeof sys;
    const viaStdio = await until('system_health degraded over stdio', async () => {
      const h = await stdioHealth();
      return h.status === 'degraded' ? h : null;
    });
    assert.equal(viaStdio.node?.code, 'ErrChainBroken');
    assert.doesNotMatch(JSON.stringify([needs.node, sys.node]), /is not there/, 'the error text stays in the log');
    // Three more polls (one a second) fail the same way: still the one line, at level error (pino 50).
    await until('three more attempts', async () => {
      const h = await health(base);
      return Number(h.body.attempts) >= (degraded.body.attempts as number) + 3 ? h : null;
    });
    assert.equal(failing().length, 1, failing().join('\n'));
    const line = JSON.parse(failing()[0]!) as { level: number; err: { message: string } };
    assert.equal(line.level, 50);
    assert.match(line.err.message, /position \d+ is not there/);

    await raw.query('UPDATE es_chains SET position = position - 3 WHERE tenant = $1', [TENANT]);
    await until('200 again', async () => ((await health(base)).status === 200 ? true : null));
    const cleared = (await (await fetch(`${base}/api/attention`, { headers: auth })).json()) as { node: unknown };
    assert.equal(cleared.node, null);
    await until('system_health ok over stdio', async () => ((await stdioHealth()).status === 'ok' ? true : null));
    const again = await until('the recovery line', async () => {
      const lines = live.stderrLines.filter((l) => l.includes('events again after failed attempts'));
      return lines.length > 0 ? lines : null;
    });
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(again.length, 1);
    assert.equal(failing().length, 1, 'nothing more was reported');
    assert.equal(await live.stop(), 0);
  });
});
