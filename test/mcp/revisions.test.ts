import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fixedClock } from '../../src/clock.js';
import { readAll } from '../../src/engine/store.js';
import { tasksOfGoal } from '../../src/projections/task-queries.js';
import { join } from 'node:path';
import { colony, COLONY_BIN } from '../helpers/cli.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { ok } from '../helpers/calls.js';
import type { ToolClient } from '../helpers/mcp.js';

/**
 * Both MCP revisions on one `/mcp`: a 2025-11-25 client (SDK v1, `initialize` + session) and a
 * 2026-07-28 client (SDK v2 pinned to the revision: `server/discover`, no session, every request
 * enveloped) run the same goal scenario — create, propose, approve, claim, complete, an idempotent
 * replay and a refused call — against two fresh stores on the same fixed clock. The logs must be the
 * same event for event, and so must the answers: nothing a call means depends on the revision.
 */
interface Caller extends ToolClient {
  close(): Promise<void>;
  revision(): string | undefined;
}

const MODERN = '2026-07-28';
const KEY = { 'colony/idempotency_key': 'complete-once' };
const WORKER_TOOLS = ['whoami', 'claim_task', 'complete_task', 'get_goal'];

async function legacyClient(base: string, token: string): Promise<Caller> {
  const client = new ClientV1({ name: 'v1-client', version: '0' });
  const transport = new HttpV1(new URL('/mcp', base), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  assert.ok(transport.sessionId, 'the 2025 client holds a session');
  return {
    callTool: (params) => client.callTool(params),
    close: () => client.close(),
    revision: () => transport.protocolVersion,
  };
}

async function modernClient(base: string, token: string): Promise<Caller> {
  const client = new ClientV2({ name: 'v2-client', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  const transport = new HttpV2(new URL('/mcp', base), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  assert.equal(transport.sessionId, undefined, 'the 2026-07-28 client has no session');
  return {
    callTool: (params) => client.callTool(params),
    close: () => client.close(),
    revision: () => client.getNegotiatedProtocolVersion(),
  };
}

/** The scenario; returns every answer (ids and all) so the two runs can be compared too. */
async function scenario(
  f: HttpFixture,
  connect: (token: string) => Promise<Caller>,
): Promise<{ answers: unknown[]; revisions: string[] }> {
  const owner = await connect(f.ownerToken);
  const worker = await connect(f.agentToken);
  try {
    const answers: unknown[] = [];
    const goal = await ok(owner, 'create_goal', {
      title: 'Docs stay true',
      description: 'Keep every page accurate against the code.',
    });
    const proposal = await ok(owner, 'propose_task_tree', {
      goal_id: goal.goal_id,
      tree: { title: 'Check the pages', description: 'Read each page against the code.' },
    });
    answers.push(
      goal,
      proposal,
      await ok(owner, 'react', { message_id: proposal.proposal_message_id, reaction: 'approve' }),
    );
    const taskId = tasksOfGoal(f.app.engine.db, goal.goal_id as number).at(-1)!.taskId;
    answers.push(await ok(worker, 'claim_task', { task_id: taskId }));
    const done = await ok(worker, 'complete_task', { task_id: taskId, summary: 'All pages checked.' }, KEY);
    // The same call again with the same idempotency key: the first answer, nothing appended.
    const head = f.eventCount();
    assert.deepEqual(await ok(worker, 'complete_task', { task_id: taskId, summary: 'All pages checked.' }, KEY), done);
    assert.equal(f.eventCount(), head);
    // A refused call (outside the agent's scope) is an isError result under either revision, appending nothing.
    const refused = (await worker.callTool({ name: 'create_goal', arguments: { title: 'x', description: 'y' } })) as {
      isError?: boolean;
      content: unknown;
    };
    assert.equal(refused.isError, true);
    assert.equal(f.eventCount(), head);
    answers.push(done, refused.content, await ok(worker, 'get_goal', { goal_id: goal.goal_id }));
    return { answers, revisions: [owner.revision() ?? '?', worker.revision() ?? '?'] };
  } finally {
    await owner.close();
    await worker.close();
  }
}

/**
 * The log without what differs by construction between two stores: command ids and the chain hashes
 * built on them, and the fixtures' random tokens (their hashes, and the sealed copies of agent tokens).
 */
const RANDOM = new Set(['tokenHash', 'sealed']);
const withoutRandom = (data: unknown): unknown =>
  JSON.parse(JSON.stringify(data, (key, value: unknown) => (RANDOM.has(key) ? undefined : value)));
const comparable = (f: HttpFixture) =>
  readAll(f.app.engine.db).map((e) => ({
    position: e.position,
    streamId: e.streamId,
    version: e.version,
    type: e.type,
    data: withoutRandom(e.data),
    actor: e.meta.actor,
    at: e.recordedAt,
  }));

describe('one /mcp, two revisions: the same scenario leaves the same log', () => {
  let legacy: HttpFixture;
  let modern: HttpFixture;
  before(async () => {
    legacy = await httpFixture({ agentTools: WORKER_TOOLS, clock: fixedClock('2026-12-01T10:00:00Z') });
    modern = await httpFixture({ agentTools: WORKER_TOOLS, clock: fixedClock('2026-12-01T10:00:00Z') });
  });
  after(async () => {
    await legacy?.close();
    await modern?.close();
  });

  it('2025-11-25 with sessions and 2026-07-28 stateless: equal answers, equal logs', async () => {
    const a = await scenario(legacy, (t) => legacyClient(legacy.base, t));
    const b = await scenario(modern, (t) => modernClient(modern.base, t));
    assert.deepEqual(a.revisions, ['2025-11-25', '2025-11-25']);
    assert.deepEqual(b.revisions, [MODERN, MODERN]);
    assert.deepEqual(b.answers, a.answers);
    const logA = comparable(legacy);
    assert.ok(
      logA.some((e) => e.type === 'TaskCompleted'),
      'the scenario ran to the end',
    );
    assert.deepEqual(comparable(modern), logA);
    // The audit trail records both revisions' calls alike: one row per call, same tools, same outcomes.
    const audit = (f: HttpFixture) =>
      f.ctx.audit
        .query({ limit: 100 })
        .map((r) => [r.principal, r.tool, r.outcome, r.errorCode])
        .reverse();
    assert.deepEqual(audit(modern), audit(legacy));
    assert.equal(legacy.ctx.audit.count(), 8);
  });

  it('a 2026-07-28 request without a token is refused like any other (401, WWW-Authenticate)', async () => {
    const res = await fetch(`${modern.base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
      }),
    });
    assert.equal(res.status, 401);
    // The challenge points an OAuth client at the protected-resource metadata (RFC 9728).
    assert.match(
      res.headers.get('www-authenticate') ?? '',
      /^Bearer .*resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    const meta = await fetch(`${modern.base}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(meta.status, 200);
    assert.ok(((await meta.json()) as { authorization_servers: string[] }).authorization_servers.length > 0);
  });

  it("answers a browser client's CORS preflight, exposing the session id and the challenge", async () => {
    const res = await fetch(`${modern.base}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://inspector.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, mcp-protocol-version',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    assert.match(res.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/);
  });

  it('lists tools in the same deterministic order under both revisions, with cache hints on 2026-07-28', async () => {
    const v1 = new ClientV1({ name: 'v1', version: '0' });
    await v1.connect(
      new HttpV1(new URL('/mcp', modern.base), {
        requestInit: { headers: { Authorization: `Bearer ${modern.ownerToken}` } },
      }),
    );
    const v2 = new ClientV2({ name: 'v2', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await v2.connect(
      new HttpV2(new URL('/mcp', modern.base), {
        requestInit: { headers: { Authorization: `Bearer ${modern.ownerToken}` } },
      }),
    );
    try {
      const names1 = (await v1.listTools()).tools.map((t) => t.name);
      const listed = await v2.listTools();
      const names2 = listed.tools.map((t) => t.name);
      assert.deepEqual(names2, names1);
      assert.deepEqual(names1, [...names1].sort());
      const hint = listed as unknown as { ttlMs?: number; cacheScope?: string };
      assert.equal(hint.cacheScope, 'private');
      assert.ok((hint.ttlMs ?? 0) > 0, `ttlMs ${hint.ttlMs}`);
    } finally {
      await v1.close();
      await v2.close();
    }
  });
});

describe('colony stdio serves both revisions on one binary', () => {
  const scratch = tempDir('colony-stdio-revisions-');
  after(() => scratch.cleanup());

  it('a 2025 client (initialize) and a 2026-07-28 client (server/discover) both call whoami; the 2026 one listens', async () => {
    const dir = join(scratch.dir, 'data');
    const token = JSON.parse(colony(['init', '--data', dir, '--json']).stdout).token as string;
    const params = {
      command: process.execPath,
      args: [COLONY_BIN, 'stdio', '--data', dir],
      env: { ...process.env, COLONY_TOKEN: token, COLONY_DATA: '' } as Record<string, string>,
      stderr: 'pipe' as const,
    };
    const v1 = new ClientV1({ name: 'v1', version: '0' });
    await v1.connect(new StdioV1(params));
    const v2 = new ClientV2({ name: 'v2', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await v2.connect(new StdioV2(params));
    try {
      assert.equal(v2.getNegotiatedProtocolVersion(), MODERN);
      const a = await v1.callTool({ name: 'whoami', arguments: {} });
      const b = await v2.callTool({ name: 'whoami', arguments: {} });
      assert.equal((a.structuredContent as { kind: string }).kind, 'owner');
      assert.deepEqual(b.structuredContent, a.structuredContent);
      // A 2026-07-28 listen stream over stdio hears a change to the goal it listens to.
      const goal = (
        await v2.callTool({ name: 'create_goal', arguments: { title: 'Docs', description: 'Keep the docs true.' } })
      ).structuredContent as { goal_id: number };
      const uri = `colony://goals/${goal.goal_id}`;
      const heard = new Promise<string>((resolve) =>
        v2.setNotificationHandler('notifications/resources/updated', (n) => resolve(n.params.uri)),
      );
      const sub = await v2.listen({ resourceSubscriptions: [uri] });
      await v2.callTool({
        name: 'propose_task_tree',
        arguments: {
          goal_id: goal.goal_id,
          tree: { title: 'Read the pages', description: 'Each page against the code.' },
        },
      });
      assert.equal(await Promise.race([heard, new Promise((r) => setTimeout(() => r('nothing in 5 s'), 5000))]), uri);
      await sub.close();
    } finally {
      await v1.close();
      await v2.close();
    }
  });
});
