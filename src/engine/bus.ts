import type { Observable } from 'rxjs';
// The two modules this needs, not rxjs's index: that loads every operator (~100 modules, a third of a CLI
// command's start) for a Subject. rxjs exports these paths ("./internal/*" in its package.json).
import { config } from 'rxjs/internal/config';
import { Subject } from 'rxjs/internal/Subject';
import { log } from '../log.js';
import type { StoredEvent } from './event.js';

// A subscriber that throws must not take the server down (rxjs would rethrow it asynchronously).
config.onUnhandledError = (err) => log.error({ err }, 'an event subscriber failed');

/**
 * Publishes stored events after their transaction commits — never before, never for a rolled-back
 * command, so no side effect ever follows from a fact that was not recorded. Subscribers (SSE, the
 * reactor, audit) run side effects from here. Only events committed by this process are published;
 * other processes' appends are seen by tailing the log.
 */
export class EventBus {
  private readonly subject = new Subject<StoredEvent>();
  readonly events$: Observable<StoredEvent> = this.subject.asObservable();
  private readonly queue: StoredEvent[] = [];
  private draining = false;

  /**
   * Delivers in log order to every subscriber. A subscriber that runs a command while handling an
   * event (the reactor does) only enqueues that command's events: they are delivered after the
   * current ones, so no subscriber ever sees positions out of order.
   */
  publish(events: readonly StoredEvent[]): void {
    this.queue.push(...events);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let event = this.queue.shift(); event; event = this.queue.shift()) this.subject.next(event);
    } finally {
      this.draining = false;
    }
  }

  /**
   * Synchronous listeners told the moment a command of this process appended events — before its
   * COMMIT, which under group commit may be a turn of the event loop later. Only for dropping caches
   * that the events make wrong (the authenticated callers): acting on them must wait for `events$`.
   */
  readonly onAppend = new Set<(events: readonly StoredEvent[]) => void>();

  appended(events: readonly StoredEvent[]): void {
    if (events.length > 0) for (const listener of this.onAppend) listener(events);
  }

  complete(): void {
    this.subject.complete();
  }
}
