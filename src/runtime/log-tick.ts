import type { Subscription } from 'rxjs';
import type { App } from '../app.js';
import type { StoredEvent } from '../engine/event.js';

/**
 * Calls `tick` after this process commits an event `wake` cares about (once per burst, after the commit:
 * a tick that writes must not run inside the committing transaction) and every `pollMs`, so commits of
 * other processes (`colony approve` from a shell, a `colony stdio` agent) are seen too. The shape the
 * runtime's log followers share (activity-log.ts, auto-approver.ts); `stop()` ends both.
 */
export class LogTick {
  private subscription: Subscription | null = null;
  private poller: NodeJS.Timeout | null = null;
  private scheduled = false;

  constructor(
    private readonly app: App,
    private readonly tick: () => void,
    private readonly pollMs: number,
    private readonly wake: (e: StoredEvent) => boolean = () => true,
  ) {}

  get running(): boolean {
    return this.poller !== null && this.app.engine.db.open;
  }

  start(): this {
    this.subscription = this.app.engine.bus.events$.subscribe((e) => {
      if (this.wake(e)) this.schedule();
    });
    this.poller = setInterval(() => this.tick(), this.pollMs);
    this.poller.unref();
    return this;
  }

  stop(): void {
    this.subscription?.unsubscribe();
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.tick();
    });
  }
}
