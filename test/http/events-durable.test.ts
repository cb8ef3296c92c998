import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicChannel, sendToChannel } from '../../src/actions/channels.js';
import { eventsServer, nextEvent, openSse, type EventsServer, type SseStream } from '../../testkit/sse.js';

/**
 * `GET /api/events` on a FULL store, where a grouped batch is committed before its WAL is synced
 * (src/engine/wal-sync.ts): a stream sends an event only once it is on disk, and a client that connects —
 * live from `now`, or from the start through the backlog — while batches wait for their sync still reads
 * every position exactly once, in order.
 */
const message = (body: string) => ({ body, subject: null, priority: 5, metadata: null, replyTo: null });
const afterCommit = () => new Promise((resolve) => setImmediate(resolve));

async function readUntil(stream: SseStream, last: number): Promise<number[]> {
  const ids: number[] = [];
  const timer = setTimeout(() => stream.close(), 10_000);
  try {
    for (let f = await nextEvent(stream); f; f = await nextEvent(stream)) {
      ids.push(f.id);
      if (f.id >= last) break;
    }
  } finally {
    clearTimeout(timer);
    stream.close();
  }
  return ids;
}

describe('the event stream of a store whose batches sync off the event loop', () => {
  let s: EventsServer;
  before(async () => {
    s = await eventsServer({ durability: 'full' });
  });
  after(() => s.close());

  it('every position once, in order, for clients that connect while batches wait for their sync', async () => {
    const alice = s.owner('alice');
    const channelId = createPublicChannel(s.app, alice.userId, 'durable', 'Batches.', { actor: 'system' });
    const start = s.app.engine.head().position;
    const live = await openSse(`${s.base}/api/events?after=now`, alice.token);
    const send = (body: string) =>
      s.app.engine.group.run(() =>
        sendToChannel(s.app, alice.speaker, { id: channelId }, message(body), { actor: 'system' }),
      );
    const sends: Promise<unknown>[] = [];
    let pendingWhenConnected = false;
    let backlog: Promise<SseStream> | null = null;
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 5; i++) sends.push(send(`r${round}m${i}`));
      await afterCommit(); // committed; its sync is on the pool
      if (round === 2) {
        pendingWhenConnected = s.app.engine.group.wal.durable() !== null;
        backlog = openSse(`${s.base}/api/events?after=${start}`, alice.token);
      }
    }
    await Promise.all(sends);
    const last = s.app.engine.head().position;
    assert.equal(pendingWhenConnected, true, 'a batch was waiting for its sync when the second client came');
    const [fromNow, fromStart] = await Promise.all([readUntil(live, last), readUntil(await backlog!, last)]);
    const range = (from: number) => Array.from({ length: last - from }, (_, i) => from + 1 + i);
    assert.deepEqual(fromStart, range(start), 'backlog then live: every position once, in order');
    assert.deepEqual(fromNow, range(fromNow[0]! - 1), 'live from now: no gap, no repeat');
    assert.ok(fromNow[0]! <= start + 1, 'live from before the first send');
  });
});
