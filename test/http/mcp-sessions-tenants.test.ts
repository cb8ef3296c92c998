import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/engine/db.js';
import { AuditLog } from '../../src/mcp/audit.js';
import { colony } from '../helpers/cli.js';
import { headers, sessionServer, TOOLS_LIST, type SessionServer } from './mcp-session-server.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Sessions and audit rows are bound to the principal's id and tenant, not its name: two owners each
 * have an agent `worker`, and B's worker holding A's session id gets nowhere.
 */
let s: SessionServer;
let a: { userId: number; agentId: number; token: string };
let b: { userId: number; agentId: number; token: string };
before(async () => {
  s = await sessionServer();
  const [ownerA, ownerB] = [s.owner('alice'), s.owner('bob')];
  a = { userId: ownerA.userId, ...s.agent('worker', ownerA.userId) };
  b = { userId: ownerB.userId, ...s.agent('worker', ownerB.userId) };
});
after(() => s.close());

const rowsOf = (tool: string) =>
  s.ctx.audit.query({ tool }).map((r) => [r.principal, r.principalId, r.tenantId, r.outcome]);

describe('a session of tenant A used by tenant B’s same-named agent', () => {
  it('answers 403 to tools/list, GET and DELETE, and A’s session keeps working', async () => {
    const client = await s.connect(a.token);
    assert.equal(
      ((await client.callTool({ name: 'whoami', arguments: {} })).structuredContent as { name: string }).name,
      'worker',
    );
    const stolen = (client.transport as { sessionId?: string }).sessionId!;
    const list = await fetch(`${s.base}/mcp`, {
      method: 'POST',
      headers: headers(b.token, stolen),
      body: JSON.stringify(TOOLS_LIST),
    });
    assert.equal(list.status, 403);
    assert.match(JSON.stringify(await list.json()), /another principal/);
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${s.base}/mcp`, { method, headers: headers(b.token, stolen) });
      assert.equal(res.status, 403, method);
      await res.arrayBuffer();
    }
    assert.equal(s.routes.sessionCount(), 1);
    assert.equal((await client.callTool({ name: 'whoami', arguments: {} })).isError, undefined);
    assert.ok((await client.listTools()).tools.some((t) => t.name === 'whoami'));
  });

  it('records each worker’s calls with its own principal id and tenant', async () => {
    const before = s.ctx.audit.count();
    await (await s.connect(b.token)).callTool({ name: 'whoami', arguments: {} });
    await (await s.connect(a.token)).callTool({ name: 'whoami', arguments: { unexpected: 1 } });
    assert.equal(s.ctx.audit.count(), before + 2);
    assert.deepEqual(rowsOf('whoami').slice(-2), [
      ['agent:worker', `agent:${b.agentId}`, b.userId, 'success'],
      ['agent:worker', `agent:${a.agentId}`, a.userId, 'error'],
    ]);
    assert.notEqual(a.agentId, b.agentId);
  });

  it('records an unreadable body with the caller’s id and tenant too', async () => {
    const res = await fetch(`${s.base}/mcp`, { method: 'POST', headers: headers(b.token), body: '{"jsonrpc":' });
    assert.equal(res.status, 400);
    assert.deepEqual(rowsOf('(unreadable request)'), [['agent:worker', `agent:${b.agentId}`, b.userId, 'error']]);
  });

  it('lets `colony audit tail` filter by principal id and tenant, and print them', () => {
    const tail = (...args: string[]) => colony(['audit', 'tail', '--data', s.app.dataDir, ...args]);
    const mine = tail('--principal-id', `agent:${a.agentId}`, '--json')
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.ok(mine.length >= 3);
    for (const r of mine) assert.deepEqual([r.principalId, r.tenantId], [`agent:${a.agentId}`, a.userId]);
    const bobs = tail('--tenant', String(b.userId)).stdout.trim().split('\n');
    assert.equal(bobs.length, 2);
    for (const l of bobs) assert.match(l, new RegExp(`agent:worker \\(agent:${b.agentId}, tenant ${b.userId}\\)`));
    const bad = tail('--principal-id', 'worker');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--principal-id must be agent:<id> or user:<id>, not "worker"/);
  });
});

describe('the audit trail of an older Colony', () => {
  it('gains the id and tenant columns; rows written before keep NULL', () => {
    const scratch = tempDir('colony-audit-v1-');
    try {
      const old = openDatabase(`${scratch.dir}/audit.db`, { durability: 'normal' });
      old.exec(`CREATE TABLE audit_log (id INTEGER PRIMARY KEY, at TEXT NOT NULL, principal TEXT NOT NULL, tool TEXT NOT NULL, args_digest TEXT NOT NULL,
        outcome TEXT NOT NULL, error_code TEXT, duration_ms REAL NOT NULL, command_id TEXT);
        INSERT INTO audit_log VALUES (1, '2025-01-01T00:00:00.000Z', 'agent:worker', 'whoami', 'x', 'success', NULL, 1, NULL);
        PRAGMA user_version = 1;`);
      old.close();
      const log = AuditLog.open(scratch.dir);
      log.record({
        at: '2025-01-02T00:00:00.000Z',
        principal: 'agent:worker',
        principalId: 'agent:2',
        tenantId: 2,
        tool: 'whoami',
        argsDigest: 'y',
        outcome: 'success',
        errorCode: null,
        durationMs: 1,
        commandId: null,
      });
      assert.deepEqual(
        log.query().map((r) => [r.id, r.principalId, r.tenantId]),
        [
          [1, null, null],
          [2, 'agent:2', 2],
        ],
      );
      log.close();
    } finally {
      scratch.cleanup();
    }
  });
});
