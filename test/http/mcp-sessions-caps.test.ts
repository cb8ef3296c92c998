import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SESSIONS_MAX, SESSIONS_PER_PRINCIPAL } from '../../src/http/mcp.js';
import { colony } from '../helpers/cli.js';
import { sessionServer, TOOLS_LIST, type SessionServer } from './mcp-session-server.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Caps on open MCP sessions, over real sockets: a principal flooding `initialize` keeps at most its cap
 * open (its least recently seen sessions go first, answering 404 afterwards), cannot push out other
 * principals' sessions, and a global cap holds across principals.
 */
async function withServer(
  options: Parameters<typeof sessionServer>[0],
  fn: (s: SessionServer) => Promise<void>,
): Promise<void> {
  const s = await sessionServer(options);
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

/** `n` initializes, `width` at a time; the session ids in the order they were opened (batch by batch). */
async function flood(s: SessionServer, token: string, n: number, width = 1): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += width)
    ids.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, () => s.initialize(token)))));
  return ids;
}

const statuses = (s: SessionServer, token: string, ids: readonly string[]) =>
  Promise.all(ids.map((id) => s.post(token, id, TOOLS_LIST)));

describe('per-principal session cap', () => {
  it('leaves exactly N sessions of N+k: the oldest answer 404, the newest work', () =>
    withServer({ perPrincipal: 3, maxSessions: 100 }, async (s) => {
      const o = s.owner('owner');
      const worker = s.agent('worker', o.userId);
      const ids = await flood(s, worker.token, 5);
      assert.equal(s.routes.sessionCount(), 3);
      assert.deepEqual(await statuses(s, worker.token, ids), [404, 404, 200, 200, 200]);
    }));

  it('closes the least recently seen session, not the first opened, and a reconnecting client still works', () =>
    withServer({ perPrincipal: 3, maxSessions: 100 }, async (s) => {
      const o = s.owner('owner');
      const worker = s.agent('worker', o.userId);
      const [a, b, c] = await flood(s, worker.token, 3);
      assert.equal(await s.post(worker.token, a!, TOOLS_LIST), 200, 'a is seen again: now b is the stalest');
      const client = await s.connect(worker.token);
      assert.equal(s.routes.sessionCount(), 3);
      assert.deepEqual(await statuses(s, worker.token, [a!, b!, c!]), [200, 404, 200]);
      const who = await client.callTool({ name: 'whoami', arguments: {} });
      assert.equal((who.structuredContent as { name: string }).name, 'worker');
    }));

  it("survives another principal's flood: its sessions stay open and working", () =>
    withServer({ perPrincipal: 3, maxSessions: 8 }, async (s) => {
      const o = s.owner('owner');
      const [victim, attacker] = [s.agent('victim', o.userId), s.agent('attacker', o.userId)];
      const kept = await flood(s, victim.token, 2);
      const ownerClient = await s.connect(o.token);
      await flood(s, attacker.token, 50, 10);
      assert.equal(s.routes.sessionCount(), 2 + 1 + 3);
      assert.deepEqual(await statuses(s, victim.token, kept), [200, 200]);
      assert.equal((await ownerClient.callTool({ name: 'whoami', arguments: {} })).isError, undefined);
    }));
});

describe('global session cap', () => {
  it('holds across principals, closing the least recently seen sessions overall', () =>
    withServer({ perPrincipal: 3, maxSessions: 8 }, async (s) => {
      const o = s.owner('owner');
      const agents = ['one', 'two', 'three', 'four'].map((name) => s.agent(name, o.userId));
      const opened: [string, string][] = [];
      for (const a of agents) for (const id of await flood(s, a.token, 3)) opened.push([a.token, id]);
      assert.equal(s.routes.sessionCount(), 8);
      const answers = await Promise.all(opened.map(([token, id]) => s.post(token, id, TOOLS_LIST)));
      assert.deepEqual(answers, [404, 404, 404, 404, 200, 200, 200, 200, 200, 200, 200, 200]);
    }));

  it('keeps 2,000 initializes under the default caps (32 per principal, 1,024 in all)', () =>
    withServer({}, async (s) => {
      assert.equal(
        process.env.COLONY_MCP_SESSIONS_PER_PRINCIPAL ?? process.env.COLONY_MCP_SESSIONS_MAX,
        undefined,
        'the defaults are under test',
      );
      const o = s.owner('owner');
      await flood(s, o.token, 1000, 20);
      assert.equal(s.routes.sessionCount(), SESSIONS_PER_PRINCIPAL, 'one principal: its own cap');
      const agents = Array.from({ length: 40 }, (_, i) => s.agent(`agent-${i}`, o.userId));
      for (let round = 0; round < 25; round++) await Promise.all(agents.map((a) => s.initialize(a.token)));
      assert.equal(s.routes.sessionCount(), SESSIONS_MAX, '32 + 40 × 25 = 1,032 sessions asked for: the global cap');
    }));
});

describe('session cap settings', () => {
  it('refuses a bad COLONY_MCP_SESSIONS_* value at start with one line naming the variable', () => {
    const scratch = tempDir('colony-mcp-caps-');
    try {
      const dir = join(scratch.dir, 'data');
      assert.equal(colony(['init', '--data', dir]).code, 0);
      for (const [name, value] of [
        ['COLONY_MCP_SESSIONS_PER_PRINCIPAL', '0'],
        ['COLONY_MCP_SESSIONS_MAX', '1.5'],
      ]) {
        const r = colony(['serve', '--data', dir, '--port', '0'], { [name!]: value });
        assert.equal(r.code, 1, `${name}=${value}`);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`${name} must be a positive integer, not "${value!.replace('.', '\\.')}"`));
      }
    } finally {
      scratch.cleanup();
    }
  });
});
