import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicChannel, sendToChannel } from '../src/actions/channels.js';
import { eventsServer, openSse } from '../testkit/sse.js';
import { latencyFigures, type Figure } from './util.js';

/**
 * sse_latency_ms (median) and sse_latency_p95_ms: from a command's commit to its event parsed by an SSE
 * client of `GET /api/events` over a real loopback socket — `commits` owner posts, one at a time, each
 * awaited before the next. The clock starts when the bus publishes the event (a subscriber registered
 * before the stream's), so the commit's fsync is not counted; it stops when the client's parser yields
 * the frame. Baseline: a `GET /health` round trip on the same server (fetch, body read), alternating.
 */
export async function benchSse(
  dir: string,
  options: { commits: number; warmup: number },
): Promise<Record<string, Figure>> {
  const dataDir = join(dir, 'sse');
  mkdirSync(dataDir, { recursive: true });
  const s = await eventsServer({ dataDir, durability: 'full' });
  const published = new Map<number, number>();
  const hook = s.app.engine.bus.events$.subscribe((e) => published.set(e.position, performance.now()));
  const owner = s.owner('owner');
  const channel = createPublicChannel(s.app, owner.userId, 'bench', 'SSE latency', { actor: 'user:owner' });
  const sse = await openSse(`${s.base}/api/events?after=${s.app.engine.head().position}`, owner.token);
  let waiter = null as ((arrival: { id: number; at: number }) => void) | null;
  const reading = (async () => {
    for await (const item of sse) if (item.kind === 'event') waiter?.({ id: Number(item.id), at: performance.now() });
  })().catch(() => undefined);
  const ms = { subject: [] as number[], baseline: [] as number[] };
  try {
    for (let i = 0; i < options.warmup + options.commits; i++) {
      const t0 = performance.now();
      const health = await fetch(`${s.base}/health`);
      await health.text();
      const baseline = performance.now() - t0;
      const arrived = new Promise<{ id: number; at: number }>((resolve) => {
        waiter = resolve;
      });
      sendToChannel(
        s.app,
        owner.speaker,
        { id: channel },
        { body: `commit ${i}`, subject: null, priority: 5, metadata: null, replyTo: null },
        { actor: 'user:owner' },
      );
      const position = s.app.engine.head().position;
      const { id, at } = await arrived;
      if (id !== position) throw new Error(`the SSE client got event ${id}, expected ${position}`);
      if (i >= options.warmup) {
        ms.baseline.push(baseline);
        ms.subject.push(at - published.get(position)!);
      }
      published.delete(position);
    }
  } finally {
    hook.unsubscribe();
    sse.close();
    await reading;
    await s.close();
  }
  return latencyFigures('sse_latency', ms, `${options.commits} commits, one at a time`);
}
