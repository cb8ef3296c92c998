import { Subject, type Observable } from 'rxjs';
import type { StoredEvent } from './event.js';

/**
 * Publishes stored events after their transaction commits — never before, never for a rolled-back
 * command (rule 8). Subscribers (SSE, the reactor, audit) run side effects from here. Only events
 * committed by this process are published; other processes' appends are seen by tailing the log.
 */
export class EventBus {
  private readonly subject = new Subject<StoredEvent>();
  readonly events$: Observable<StoredEvent> = this.subject.asObservable();

  publish(events: readonly StoredEvent[]): void {
    for (const event of events) this.subject.next(event);
  }

  complete(): void {
    this.subject.complete();
  }
}
