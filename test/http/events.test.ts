import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createPublicChannel, sendDirect, sendToChannel } from '../../src/actions/channels.js';
import { createGoal } from '../../src/actions/goals.js';
import { createToken, registerAgent } from '../../src/actions/principals.js';
import { proposeTaskTree } from '../../src/actions/proposals.js';
import { requestRun } from '../../src/actions/runs.js';
import { setSecret } from '../../src/actions/secrets.js';
import { openApp } from '../../src/app.js';
import { streamKind, type StoredEvent } from '../../src/engine/event.js';
import { visibleData } from '../../src/http/event-scope.js';
import { readAll, readAllRows } from '../../src/engine/store.js';
import { getChannel } from '../../src/projections/channel-queries.js';
import { prng, seedFrom } from '../helpers/prng.js';
import { eventsServer, nextEvent, openSse, readSse, type EventsServer, type SseItem } from '../../testkit/sse.js';
import { type Speaker } from '../../src/events/principals.js';

/**
 * `GET /api/events` over real sockets: backlog then live, resuming, the goal and type filters, tenants,
 * what the data shows, heartbeats, commits by another process, a consumer that stops reading, and the
 * property that a client which keeps dropping its connection still reads the log exactly once.
 */
type Frame = { id: number; event: string; data: Record<string, unknown> };
const message = (body: string) => ({ body, subject: null, priority: 5, metadata: null, replyTo: null });
async function timeout<T>(p: Promise<T>, ms: number, what: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out: ${typeof what === 'string' ? what : what()}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads frames until one with id >= `until` (inclusive), then closes the stream. */
async function collect(
  base: string,
  token: string,
  path: string,
  until: number,
  lastEventId?: number,
): Promise<Frame[]> {
  const stream = await openSse(`${base}${path}`, token, { lastEventId });
  const frames: Frame[] = [];
  try {
    await timeout(
      (async () => {
        for (let f = await nextEvent(stream); f; f = await nextEvent(stream)) {
          frames.push(f);
          if (f.id >= until) return;
        }
        throw new Error('the stream ended');
      })(),
      5000,
      `${path} until ${until} (got ${frames.length})`,
    );
  } finally {
    stream.close();
  }
  return frames;
}

const ids = (frames: readonly Frame[]) => frames.map((f) => f.id);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('GET /api/events', () => {
  let s: EventsServer;
  let alice: ReturnType<EventsServer['owner']>;
  let bob: ReturnType<EventsServer['owner']>;
  const seen = { alice: new Set<number>(), bob: new Set<number>() };
  let aliceChannel = 0;
  let bobChannel = 0;
  let g1: { goalId: number; channelId: number; proposalId: number; taskIds: number[] };
  let g2: { goalId: number; channelId: number };
  let bobGoal = 0;
  const SECRET = 'sk-live-very-secret-value-42';

  /** Runs `fn` and records the positions it appended as `who`'s. */
  function as<T>(who: 'alice' | 'bob', fn: () => T): T {
    const from = s.app.engine.head().position;
    const value = fn();
    for (const p of range(from + 1, s.app.engine.head().position)) seen[who].add(p);
    return value;
  }
  const post = (who: 'alice' | 'bob', channelId: number, body: string) =>
    as(who, () =>
      sendToChannel(s.app, (who === 'alice' ? alice : bob).speaker, { id: channelId }, message(body), {
        actor: `user:${who}`,
      }),
    );
  const goal = (by: Speaker, title: string) =>
    createGoal(
      s.app,
      by,
      {
        title,
        description: `${title}, end to end.`,
        budgets: { tokens: null, cents: null },
        maxSpawnDepth: 2,
        coordinatorConfig: 'default',
        approvalMode: 'auto',
      },
      { actor: `user:${by.name}` },
    );
  const head = () => s.app.engine.head().position;

  before(async () => {
    s = await eventsServer({ heartbeatMs: 100, pollMs: 50 });
    alice = as('alice', () => s.owner('alice'));
    as('alice', () => {
      aliceChannel = createPublicChannel(s.app, alice.userId, 'general', 'Everything', { actor: 'user:alice' });
    });
    for (let i = 0; i < 3; i++) post('alice', aliceChannel, `hello ${i}`);
    as('alice', () => {
      const a = goal(alice.speaker, 'Ship the docs');
      const p = proposeTaskTree(
        s.app,
        alice.speaker,
        a.goalId,
        'Two steps.',
        {
          title: 'Docs',
          description: 'All the docs.',
          children: [
            { title: 'Guide', description: 'The guide.' },
            { title: 'Reference', description: 'The reference.' },
          ],
        },
        { actor: 'user:alice' },
      );
      g1 = { goalId: a.goalId, channelId: a.channelId, proposalId: p.proposalId, taskIds: p.taskIds };
      const b = goal(alice.speaker, 'Fix the build');
      g2 = { goalId: b.goalId, channelId: b.channelId };
      setSecret(s.app, alice.speaker, { name: 'API_KEY', value: SECRET, scope: 'user:alice' }, { actor: 'user:alice' });
    });
    bob = as('bob', () => s.owner('bob'));
    as('bob', () => {
      bobChannel = createPublicChannel(s.app, bob.userId, 'general', 'Bob’s', { actor: 'user:bob' });
      bobGoal = goal(bob.speaker, 'Bob’s goal').goalId;
    });
    post('bob', bobChannel, 'hi from bob');
    assert.equal(seen.alice.size + seen.bob.size, head(), 'every setup event is one owner’s');
  });
  after(() => s.close());

  it('sends the backlog in log order, then live events as they commit, with the documented frame', async () => {
    const stream = await openSse(`${s.base}/api/events`, alice.token);
    try {
      const backlog: Frame[] = [];
      const last = Math.max(...seen.alice);
      while (backlog.at(-1)?.id !== last) backlog.push((await timeout(nextEvent(stream), 5000, 'backlog'))!);
      assert.deepEqual(
        ids(backlog),
        [...seen.alice].sort((a, b) => a - b),
      );
      const [first] = backlog;
      assert.deepEqual(Object.keys(first!.data).sort(), [
        'actor',
        'data',
        'goal_id',
        'position',
        'recorded_at',
        'stream_id',
        'type',
        'version',
      ]);
      assert.deepEqual(
        { ...first!.data, recorded_at: null },
        {
          position: 1,
          stream_id: `user-${alice.userId}`,
          version: 1,
          type: 'UserCreated',
          goal_id: null,
          data: { name: 'alice', role: 'owner', userId: alice.userId },
          recorded_at: null,
          actor: 'system',
        },
      );
      assert.equal(first!.event, 'UserCreated');

      post('bob', bobChannel, 'not for alice');
      post('alice', aliceChannel, 'live one');
      const live = (await timeout(nextEvent(stream), 5000, 'live'))!;
      assert.equal(live.id, head());
      assert.equal(live.event, 'MessagePosted');
      assert.equal(live.data.actor, 'user:alice');
      assert.equal(live.data.stream_id, `channel-${aliceChannel}`);
      assert.equal((live.data.data as { body: string }).body, 'live one');
    } finally {
      stream.close();
    }
  });

  it('resumes after Last-Event-ID or ?after=N (the header wins), nothing twice and nothing missed', async () => {
    const all = [...seen.alice].sort((a, b) => a - b);
    const last = all.at(-1)!;
    for (const [path, lastEventId, from] of [
      ['/api/events', 5, 5],
      ['/api/events?after=7', undefined, 7],
      ['/api/events?after=2', 9, 9],
    ] as const) {
      const frames = await collect(s.base, alice.token, path, last, lastEventId);
      assert.deepEqual(
        ids(frames),
        all.filter((p) => p > from),
        `${path} Last-Event-ID ${lastEventId}`,
      );
    }
    // Resuming at the end: the next frame is the next of alice's events, whatever came between.
    const stream = await openSse(`${s.base}/api/events`, alice.token, { lastEventId: last });
    try {
      post('bob', bobChannel, 'between');
      post('alice', aliceChannel, 'after the resume');
      assert.equal((await timeout(nextEvent(stream), 5000, 'after resume'))!.id, head());
    } finally {
      stream.close();
    }
  });

  it('keeps one owner’s events from another: each sees exactly its own tenant’s streams', async () => {
    const bobAll = [...seen.bob].sort((a, b) => a - b);
    assert.deepEqual(ids(await collect(s.base, bob.token, '/api/events', bobAll.at(-1)!)), bobAll);
    const aliceAll = [...seen.alice].sort((a, b) => a - b);
    const frames = await collect(s.base, alice.token, '/api/events', aliceAll.at(-1)!);
    assert.deepEqual(ids(frames), aliceAll);
    assert.ok(
      frames.some(
        (f) =>
          f.data.stream_id ===
          `agent-${(frames.find((x) => x.event === 'AgentRegistered')!.data.data as { agentId: number }).agentId}`,
      ),
    );
    const goalOf = await fetch(`${s.base}/api/events?goal=${g1.goalId}`, {
      headers: { authorization: `Bearer ${bob.token}` },
    });
    assert.equal(goalOf.status, 404);
    assert.equal(((await goalOf.json()) as { error: { code: string } }).error.code, 'ErrGoalNotFound');
  });

  it("drops OAuth grants' token hashes from the data it shows", () => {
    const grant = {
      type: 'OAuthGrantRefreshed',
      streamId: 'oauth-grant-1',
      position: 1,
      version: 2,
      schemaVersion: 1,
      recordedAt: '2026-12-01T00:00:00.000Z',
      meta: { commandId: 'c', actor: 'user:owner', causationId: null, correlationId: null },
      data: {
        grantN: 1,
        accessTokenHash: 'a'.repeat(64),
        refreshTokenHash: 'b'.repeat(64),
        previousRefreshHash: 'c'.repeat(64),
        expiresAt: 'x',
      },
    } as unknown as StoredEvent;
    assert.deepEqual(visibleData(grant), { grantN: 1, expiresAt: 'x' });
  });

  it('never shows a secret, a sealed token or a token hash', async () => {
    const aliceAll = [...seen.alice].sort((a, b) => a - b);
    const res = await fetch(`${s.base}/api/events`, { headers: { authorization: `Bearer ${alice.token}` } });
    const raw: string[] = [];
    const frames: Frame[] = [];
    for await (const item of readSse(res.body!)) {
      if (item.kind !== 'event') continue;
      raw.push(item.data);
      frames.push({ id: Number(item.id), event: item.event, data: JSON.parse(item.data) as Record<string, unknown> });
      if (frames.at(-1)!.id >= aliceAll.at(-1)!) break;
    }
    const logRows = readAllRows(s.app.engine.db)
      .map((r) => r.data)
      .join('\n');
    assert.match(logRows, /"sealed":"[^"]+"/, 'the log holds sealed values (ciphertext)');
    const text = raw.join('\n');
    assert.doesNotMatch(text, /sealed|tokenHash/);
    assert.ok(!text.includes(SECRET));
    const set = frames.find((f) => f.event === 'SecretSet')!;
    assert.deepEqual(Object.keys(set.data.data as object).sort(), [
      'by',
      'name',
      'ownerId',
      'replaces',
      'scope',
      'secretId',
    ]);
    const agentToken = frames.find((f) => f.event === 'TokenIssued' && String(f.data.stream_id).startsWith('agent-'))!;
    assert.deepEqual(Object.keys(agentToken.data.data as object).sort(), ['label', 'scopes', 'tokenId']);
  });

  it('?goal=ID shows the goal, its channel, its proposals and its tasks — nothing of another goal', async () => {
    const streams = new Set([
      `goal-${g1.goalId}`,
      `channel-${g1.channelId}`,
      `proposal-${g1.proposalId}`,
      ...g1.taskIds.map((t) => `task-${t}`),
    ]);
    const expected = readAll(s.app.engine.db, { limit: 100_000 })
      .filter((e) => streams.has(e.streamId))
      .map((e) => e.position);
    assert.ok(g1.taskIds.length === 3 && expected.length >= 8);
    const stream = await openSse(`${s.base}/api/events?goal=${g1.goalId}`, alice.token);
    try {
      const frames: Frame[] = [];
      while (frames.length < expected.length) frames.push((await timeout(nextEvent(stream), 5000, 'goal backlog'))!);
      assert.deepEqual(ids(frames), expected);
      post('alice', g2.channelId, 'other goal');
      post('alice', aliceChannel, 'no goal');
      post('alice', g1.channelId, 'this goal');
      const next = (await timeout(nextEvent(stream), 5000, 'goal live'))!;
      assert.equal(next.id, head());
      assert.equal((next.data.data as { body: string }).body, 'this goal');
    } finally {
      stream.close();
    }
  });

  it('?types=A,B shows only those types', async () => {
    const types = new Set(['MessagePosted', 'GoalCreated']);
    const expected = readAll(s.app.engine.db, { limit: 100_000 })
      .filter((e) => types.has(e.type) && seen.alice.has(e.position))
      .map((e) => e.position);
    const frames = await collect(
      s.base,
      alice.token,
      '/api/events?types=MessagePosted,%20GoalCreated',
      expected.at(-1)!,
    );
    assert.deepEqual(ids(frames), expected);
    assert.ok(frames.every((f) => types.has(f.event)));
  });

  it('shows an agent what its read tools would: the team’s work, public channels, its own DMs, its own and its spawn’s runs', async () => {
    const actor = { actor: 'user:alice' };
    const agent = (name: string, parentId: number | null) =>
      registerAgent(
        s.app,
        {
          name,
          ownerId: alice.userId,
          model: 'm',
          systemPrompt: 'You help.',
          toolScope: ['whoami'],
          tier: 'supervised',
          command: 'true',
          parentId,
          spawnDepth: parentId ? 1 : 0,
        },
        actor,
      );
    const { writer, helper, peer, token } = as('alice', () => {
      const writer = agent('writer', null);
      const helper = agent('helper', writer.agentId);
      const peer = agent('peer', null);
      return {
        writer,
        helper,
        peer,
        token: createToken(s.app, 'agent', writer.agentId, 'console', ['mcp', 'api'], actor),
      };
    });
    const runs = as('alice', () => {
      sendDirect(s.app, alice.speaker, 'writer', message('for the writer'), actor);
      sendDirect(s.app, alice.speaker, 'peer', message('for the peer'), actor);
      return [writer, helper, peer].map(
        (a) => requestRun(s.app, { agentId: a.agentId, source: 'manual', by: `user-${alice.userId}` }).run.runId,
      );
    });
    post('bob', bobChannel, 'bob again');
    const mine = new Set([`agent-${writer.agentId}`, `agent-${helper.agentId}`, `run-${runs[0]}`, `run-${runs[1]}`]);
    const shown = (streamId: string) => {
      const kind = streamKind(streamId);
      if (kind === 'channel') {
        const channel = getChannel(s.app.engine.db, Number(streamId.slice('channel-'.length)))!;
        return channel.kind === 'public' || channel.members.includes(`agent-${writer.agentId}`);
      }
      return ['goal', 'task', 'proposal'].includes(kind) || mine.has(streamId);
    };
    const expected = readAll(s.app.engine.db, { limit: 100_000 })
      .filter((e) => seen.alice.has(e.position) && shown(e.streamId))
      .map((e) => e.position);
    const stream = await openSse(`${s.base}/api/events`, token);
    try {
      const frames: Frame[] = [];
      while (frames.length < expected.length) frames.push((await timeout(nextEvent(stream), 5000, 'agent backlog'))!);
      assert.deepEqual(ids(frames), expected);
      const streams = new Set(frames.map((f) => String(f.data.stream_id)));
      for (const id of mine) assert.ok(streams.has(id), id);
      assert.ok(
        ![...streams].some(
          (id) => /^(user|secret)-/.test(id) || id === `agent-${peer.agentId}` || id === `run-${runs[2]}`,
        ),
      );
      assert.ok(frames.some((f) => (f.data.data as { body?: string }).body === 'for the writer'));
      assert.ok(!frames.some((f) => (f.data.data as { body?: string }).body === 'for the peer'));
      as('alice', () => sendDirect(s.app, alice.speaker, 'peer', message('peer only'), actor));
      as('alice', () => sendDirect(s.app, alice.speaker, 'writer', message('writer only'), actor));
      const next = (await timeout(nextEvent(stream), 5000, 'agent live'))!;
      assert.equal((next.data.data as { body: string }).body, 'writer only');
    } finally {
      stream.close();
    }
  });

  it('refuses what it cannot answer: no token, a token without the api scope, bad positions and filters', async () => {
    const get = async (path: string, token: string | null, headers: Record<string, string> = {}) => {
      const res = await fetch(`${s.base}${path}`, {
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      });
      const body = (await res.json()) as { error?: { code: string } | string };
      return [res.status, typeof body.error === 'object' ? body.error.code : body.error];
    };
    assert.deepEqual(await get('/api/events', null), [401, 'invalid_token']);
    const agentId = (
      readAll(s.app.engine.db, { limit: 100_000 }).find(
        (e) => e.type === 'AgentRegistered' && seen.alice.has(e.position),
      )!.data as { agentId: number }
    ).agentId;
    const agentMcp = createToken(s.app, 'agent', agentId, 'mcp', ['mcp'], { actor: 'user:alice' });
    assert.deepEqual(await get('/api/events', agentMcp), [403, 'insufficient_scope']);
    assert.deepEqual(await get('/api/events?after=abc', alice.token), [400, 'ErrInvalidInput']);
    assert.deepEqual(await get('/api/events?after=0x10', alice.token), [400, 'ErrInvalidInput']);
    assert.deepEqual(await get('/api/events', alice.token, { 'last-event-id': '1e3' }), [400, 'ErrInvalidInput']);
    assert.deepEqual(await get(`/api/events?after=${head() + 1}`, alice.token), [400, 'ErrInvalidInput']);
    assert.deepEqual(await get('/api/events?since=1', alice.token), [400, 'ErrInvalidInput']);
    assert.deepEqual(await get('/api/events?types=Message-Posted', alice.token), [400, 'ErrInvalidInput']);
    assert.deepEqual(await get('/api/events?types=,', alice.token), [400, 'ErrInvalidInput']);
    assert.deepEqual(await get('/api/events?goal=999', alice.token), [404, 'ErrGoalNotFound']);
    assert.deepEqual(await get(`/api/events?goal=${bobGoal}`, alice.token), [404, 'ErrGoalNotFound']);
    const headOnly = await fetch(`${s.base}/api/events`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${alice.token}` },
    });
    assert.equal(headOnly.status, 200, 'HEAD answers the headers and ends');
    assert.equal(s.route.stats().connections, 0);
  });

  it('sends `: keep-alive` comments while nothing happens', async () => {
    const stream = await openSse(`${s.base}/api/events?after=${head()}`, alice.token);
    try {
      const comments: SseItem[] = [];
      await timeout(
        (async () => {
          for await (const item of stream) {
            assert.equal(item.kind, 'comment');
            comments.push(item);
            if (comments.length === 3) return;
          }
        })(),
        3000,
        'heartbeats',
      );
      assert.deepEqual(
        comments.map((c) => c.kind === 'comment' && c.text),
        ['keep-alive', 'keep-alive', 'keep-alive'],
      );
    } finally {
      stream.close();
    }
  });

  it('?after=now starts at the head; ?plain=1 drops the event line, live and when catching up; each frame names its goal', async () => {
    const taskEvent = readAll(s.app.engine.db, { limit: 100_000 }).find((e) => e.streamId === `task-${g1.taskIds[1]}`)!;
    const goalOf = (
      await collect(s.base, alice.token, `/api/events?after=${taskEvent.position - 1}`, taskEvent.position)
    )[0]!;
    assert.deepEqual([goalOf.id, goalOf.data.goal_id], [taskEvent.position, g1.goalId]);

    const stream = await openSse(`${s.base}/api/events?after=now&plain=1`, alice.token);
    const other = openApp({ dataDir: s.dataDir, durability: 'normal' });
    try {
      const from = head();
      post('alice', g1.channelId, 'live, plain');
      const live = (await timeout(nextEvent(stream), 5000, 'live plain'))!;
      assert.deepEqual(
        [live.id, live.event, live.data.type, live.data.goal_id],
        [from + 1, 'message', 'MessagePosted', null],
      );
      // Another process's commit reaches the stream through the backlog path: plain there too.
      sendToChannel(other, alice.speaker, { id: aliceChannel }, message('caught up, plain'), { actor: 'user:alice' });
      const caught = (await timeout(nextEvent(stream), 5000, 'backlog plain'))!;
      assert.deepEqual(
        [caught.id, caught.event, (caught.data.data as { body: string }).body],
        [from + 2, 'message', 'caught up, plain'],
      );
    } finally {
      other.engine.close();
      stream.close();
      for (const p of range(seen.alice.size + seen.bob.size + 1, head())) seen.alice.add(p);
    }
  });

  it('sends what another process commits (its bus is not this one’s), in order with this process’s commits', async () => {
    const stream = await openSse(`${s.base}/api/events?after=${head()}`, alice.token);
    const other = openApp({ dataDir: s.dataDir, durability: 'normal' });
    try {
      const from = head();
      sendToChannel(other, alice.speaker, { id: aliceChannel }, message('from the CLI'), { actor: 'user:alice' });
      assert.equal(s.app.engine.head().position, from + 1);
      const first = (await timeout(nextEvent(stream), 5000, 'the other process’s event'))!;
      assert.equal(first.id, from + 1);
      sendToChannel(other, alice.speaker, { id: aliceChannel }, message('CLI again'), { actor: 'user:alice' });
      post('alice', aliceChannel, 'and the server'); // the bus skips from+2: the stream reads it from the log first
      const next = [
        (await timeout(nextEvent(stream), 5000, 'gap'))!,
        (await timeout(nextEvent(stream), 5000, 'live'))!,
      ];
      assert.deepEqual(ids(next), [from + 2, from + 3]);
      assert.deepEqual(
        next.map((f) => (f.data.data as { body: string }).body),
        ['CLI again', 'and the server'],
      );
    } finally {
      other.engine.close();
      stream.close();
      for (const p of range(seen.alice.size + seen.bob.size + 1, head())) seen.alice.add(p);
    }
  });
});

describe('GET /api/events with a consumer that stops reading', () => {
  it('stops writing at maxPendingBytes (the log is the buffer), cuts the stalled consumer off, and the client resumes where it stopped', async () => {
    const cap = 64 * 1024;
    const s = await eventsServer({ maxPendingBytes: cap, stallMs: 300 });
    try {
      const alice = s.owner('alice');
      const actor = { actor: 'user:alice' };
      const channel = createPublicChannel(s.app, alice.userId, 'general', 'g', actor);
      const res = await new Promise<http.IncomingMessage>((resolve) => {
        http.get(`${s.base}/api/events`, { headers: { authorization: `Bearer ${alice.token}` } }, resolve);
      });
      res.pause();
      let outcome = '';
      res.on('error', () => {
        outcome ||= 'cut off';
      });
      res.on('end', () => {
        outcome ||= 'ended';
      });
      const body = 'x'.repeat(15_000);
      let appended = 0;
      while (s.route.stats().waiting === 0 && s.route.stats().dropped === 0) {
        assert.ok(appended < 4000, 'the server never stopped writing');
        s.app.engine.transact(actor, () => {
          for (let i = 0; i < 20; i++) sendToChannel(s.app, alice.speaker, { id: channel }, message(body), actor);
        });
        appended += 20;
        await new Promise((r) => setTimeout(r, 2));
      }
      // Far more than the cap was committed while the consumer slept: the server held at most the cap and one frame.
      for (let i = 0; i < 40; i++) sendToChannel(s.app, alice.speaker, { id: channel }, message(body), actor);
      await timeout(
        (async () => {
          while (s.route.stats().dropped === 0) await new Promise((r) => setTimeout(r, 20));
        })(),
        5000,
        'cut off',
      );
      const { peakPendingBytes, connections } = s.route.stats();
      assert.ok(peakPendingBytes <= cap + 16 * 1024, `peak ${peakPendingBytes} bytes`);
      assert.equal(connections, 0);
      // What the client had received is a prefix of the log; it resumes after its last complete frame.
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.resume();
      await timeout(
        new Promise<void>((resolve) => {
          res.on('close', () => resolve());
        }),
        5000,
        'the response to close',
      );
      const frames = [
        ...Buffer.concat(chunks)
          .toString('utf8')
          .matchAll(/^id: (\d+)\n(?:[^\n]+\n)*?data: [^\n]*\n\n/gm),
      ].map((m) => Number(m[1]));
      assert.ok(
        frames.length > 0 && frames.length < s.app.engine.head().position,
        `${frames.length} frames before the cut`,
      );
      assert.deepEqual(frames, range(1, frames.length));
      assert.ok(['cut off', 'ended', ''].includes(outcome));
      const rest = await collect(s.base, alice.token, '/api/events', s.app.engine.head().position, frames.at(-1));
      assert.deepEqual(ids(rest), range(frames.at(-1)! + 1, s.app.engine.head().position));
    } finally {
      await s.close();
    }
  });
});

describe('GET /api/events while 10,000 events are appended and the client keeps reconnecting', () => {
  it('reads every position of the log exactly once, in order', async () => {
    const seed = seedFrom('SSE_SEED');
    const [writes, reads] = [prng(seed), prng(seed ^ 0x5bd1e995)];
    const s = await eventsServer({ pageSize: 97 });
    try {
      const alice = s.owner('alice');
      const actor = { actor: 'user:alice' };
      // Many channels: a post folds its channel's message ids (commands/channels.ts), so one channel of 10,000 posts is quadratic.
      const channels = Array.from({ length: 100 }, (_, i) =>
        createPublicChannel(s.app, alice.userId, `c${i}`, 'g', actor),
      );
      const target = s.app.engine.head().position + 10_000;
      let appending = true;
      let stop = false;
      const appender = (async () => {
        while (!stop && s.app.engine.head().position < target) {
          const batch = Math.min(writes.int(1, 40), target - s.app.engine.head().position);
          s.app.engine.transact(actor, () => {
            for (let i = 0; i < batch; i++)
              sendToChannel(s.app, alice.speaker, { id: writes.pick(channels) }, message(`m${i}`), actor);
          });
          if (writes.next() < 0.3) await new Promise((r) => setTimeout(r, writes.int(0, 3)));
          else await new Promise((r) => setImmediate(r));
        }
        appending = false;
      })();
      const received: number[] = [];
      let connections = 0;
      await timeout(
        (async () => {
          while (appending || received.at(-1) !== target) {
            connections += 1;
            const last = received.at(-1) ?? 0;
            const useHeader = reads.next() < 0.5;
            const abort = new AbortController();
            // Half the connections are dropped 1-40 ms after they are asked for (maybe before any event), the
            // others 1-40 ms after their first event (or after a second without one: at the head, nothing
            // more may come). On a loaded machine a connection can take longer than 40 ms to answer, and the
            // first kind alone could then drop every one before it read anything.
            const dropAfter = reads.int(1, 40);
            let waitingForFirst = reads.next() >= 0.5;
            let timer = setTimeout(() => abort.abort(), waitingForFirst ? 1000 : dropAfter);
            const quota = reads.int(1, 1500);
            try {
              const res = await fetch(`${s.base}/api/events${useHeader ? '' : `?after=${last}`}`, {
                headers: {
                  authorization: `Bearer ${alice.token}`,
                  ...(useHeader && last > 0 ? { 'last-event-id': String(last) } : {}),
                },
                signal: abort.signal,
              });
              let got = 0;
              for await (const item of readSse(res.body!)) {
                if (item.kind !== 'event') continue;
                if (waitingForFirst) {
                  waitingForFirst = false;
                  clearTimeout(timer);
                  timer = setTimeout(() => abort.abort(), dropAfter);
                }
                received.push(Number(item.id));
                if (++got >= quota || received.at(-1) === target) break;
              }
            } catch (e) {
              if ((e as Error).name !== 'AbortError') throw e;
            } finally {
              clearTimeout(timer);
              abort.abort();
            }
          }
        })(),
        60_000, // a liveness guard, not a speed test: 3 s alone, up to ~15 s beside four busy loops on two cores
        () =>
          `reading (seed ${seed}): ${received.length} ids, last ${received.at(-1)}, ${connections} connections, appending ${appending}, target ${target}, head ${s.app.engine.head().position}`,
      ).finally(() => {
        stop = true;
      });
      await appender;
      assert.ok(connections > 20, `${connections} connections`);
      assert.equal(received.length, target, `seed ${seed}: ${received.length} ids for ${target} positions`);
      assert.deepEqual(received, range(1, target), `seed ${seed}`);
    } finally {
      await s.close();
    }
  });
});
