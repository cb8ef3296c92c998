import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicChannel, sendToChannel } from '../../src/actions/channels.js';
import { eventsServer, nextEvent, openSse, type EventsServer, type SseStream } from '../../testkit/sse.js';
import { holdThePool } from '../helpers/hold-pool.js';

/**
 * `GET /api/events` on a FULL store, where a batch under load is committed before its WAL is synced on the
 * thread pool (src/engine/wal-sync.ts): with the pool held busy so the sync cannot return, a stream sends
 * nothing of the batch, a client that connects "now" starts before it, and once the sync returns every
 * client reads each position exactly once, in order.
 */
const message = (body: string) => ({ body, subject: null, priority: 5, metadata: null, replyTo: null });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every event id the stream sends, as it sends it, until closed. */
function watch(stream: SseStream): { ids: number[]; close(): void } {
  const ids: number[] = [];
  void (async () => {
    for (let f = await nextEvent(stream); f; f = await nextEvent(stream)) ids.push(f.id);
  })().catch(() => undefined);
  return { ids, close: () => stream.close() };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await sleep(20);
  assert.ok(check(), what);
}

describe('the event stream of a store whose batches sync off the event loop', () => {
  let s: EventsServer;
  before(async () => {
    s = await eventsServer({ durability: 'full' });
    s.app.engine.group.deferSyncs = true; // as createHttpApp sets it (this server mounts the stream alone)
  });
  after(() => s.close());

  it('nothing of a batch before its sync returns; "now" starts before it; afterwards each position once, in order', async () => {
    const alice = s.owner('alice');
    const channelId = createPublicChannel(s.app, alice.userId, 'durable', 'Batches.', { actor: 'system' });
    const send = (body: string) =>
      s.app.engine.group.run(() =>
        sendToChannel(s.app, alice.speaker, { id: channelId }, message(body), { actor: 'system' }),
      );
    const first = watch(await openSse(`${s.base}/api/events?after=now`, alice.token));
    await Promise.all([send('hello 1'), send('hello 2')]); // callers together: the next batch is deferred
    const hello = s.app.engine.head().position;
    await until(() => first.ids.includes(hello), 'the first client is live');

    const pool = holdThePool(3_000_000);
    const batch = [send('a'), send('b'), send('c')];
    await sleep(50);
    assert.notEqual(s.app.engine.group.wal.durable(), null, 'committed, its sync waiting for the pool');
    const second = watch(await openSse(`${s.base}/api/events?after=now`, alice.token));
    await sleep(200);
    assert.notEqual(s.app.engine.group.wal.durable(), null, 'still waiting');
    assert.deepEqual(first.ids, [hello - 1, hello], 'the stream sent nothing of it');
    await Promise.all([pool, ...batch]);
    const last = s.app.engine.head().position;
    await until(() => first.ids.includes(last) && second.ids.includes(last), 'both clients got the batch');
    first.close();
    second.close();
    assert.deepEqual(first.ids, [hello - 1, hello, last - 2, last - 1, last]);
    assert.deepEqual(second.ids, [last - 2, last - 1, last], '"now" was before the batch: it came live, once');
  });
});
