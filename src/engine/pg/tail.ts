import type pg from 'pg';
import { LOG_START, type LogCursor, type TenantEvent } from '../store-port.js';
import { openClient } from './connect.js';
import type { PgEventStore } from './store.js';

export interface TailOptions {
  after?: LogCursor;
  /** Called with each page of new events, in the global order; the next page waits for it. */
  onEvents(events: readonly TenantEvent[]): void | Promise<void>;
  /** Reads anyway this often (default 1 s): a NOTIFY is only a wake-up, and a rolled-back older transaction sends none. */
  pollMs?: number;
}

/**
 * Every node's commits, live, on any node: LISTEN wakes the tail when some node commits (each append
 * sends NOTIFY in its transaction), and the ordered read fetches (PgEventStore.readAll), so an event
 * that committed late is delivered in its place, never skipped. The SSE stream and the reactor read
 * from here.
 */
export class PgTail {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> = Promise.resolve();
  private again = false;
  private running = false;
  private stopped = false;

  private constructor(
    private readonly store: PgEventStore,
    private readonly options: TailOptions,
    public cursor: LogCursor,
  ) {}

  static async start(store: PgEventStore, options: TailOptions): Promise<PgTail> {
    const tail = new PgTail(store, options, options.after ?? LOG_START);
    await tail.listen();
    // A failed read (the server away, onEvents threw) is tried again from the same cursor on the next round.
    tail.timer = setInterval(() => void tail.wake().catch(() => undefined), options.pollMs ?? 1000);
    tail.timer.unref();
    void tail.wake().catch(() => undefined);
    return tail;
  }

  /** Reads until caught up; concurrent wake-ups fold into one more round. */
  wake(): Promise<void> {
    if (this.stopped) return this.draining;
    if (this.running) {
      this.again = true;
      return this.draining;
    }
    this.running = true;
    this.draining = this.drain().finally(() => (this.running = false));
    return this.draining;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.draining.catch(() => undefined);
    await this.client?.end().catch(() => undefined);
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        const page = await this.store.readAll(this.cursor);
        if (page.events.length === 0) break;
        await this.options.onEvents(page.events);
        this.cursor = page.cursor;
      }
    } while (this.again && !this.stopped);
  }

  private async listen(): Promise<void> {
    const client = await openClient(this.store.target);
    client.on('notification', () => void this.wake().catch(() => undefined));
    // A lost connection is found again by the next poll; meanwhile the poll alone keeps the tail going.
    client.on('error', () => {
      this.client = null;
      if (!this.stopped) setTimeout(() => void this.listen().catch(() => undefined), 1000).unref();
    });
    await client.query('LISTEN colony_events');
    this.client = client;
  }
}
