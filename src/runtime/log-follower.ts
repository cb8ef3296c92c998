import type { Engine } from '../engine/engine.js';
import type { StoredEvent } from '../engine/event.js';
import { readAll } from '../engine/store.js';

/**
 * The reactor's place in the log: every committed event once, in log order. This process's events come
 * from the bus (`published`), so a batch is not read back from the database right after its COMMIT;
 * the log is read only when its head is past them — another process's commits, or events a command run
 * while reacting appended after the ones in hand — and only up to its durable head (engine.durableHead):
 * a batch not yet on disk is handed out when the bus publishes it.
 */
export class LogFollower {
  /** The position of the last event handed out. */
  cursor: number;
  private published: StoredEvent[] = [];

  constructor(private readonly engine: Engine) {
    this.cursor = engine.durableHead();
  }

  /** An event this process committed (the bus's subscriber). */
  publish(event: StoredEvent): void {
    this.published.push(event);
  }

  get caughtUp(): boolean {
    return this.cursor >= this.engine.durableHead();
  }

  /** Hands every committed event past the cursor to `react`, in order (it may commit more: they follow). */
  follow(react: (event: StoredEvent) => void): void {
    const published = this.published;
    this.published = [];
    for (const event of published) {
      if (event.position !== this.cursor + 1) continue; // already read from the log, or after a gap it fills
      this.cursor = event.position;
      react(event);
    }
    for (let to = this.engine.durableHead(); this.cursor < to; to = this.engine.durableHead()) {
      const page = readAll(this.engine.db, { after: this.cursor, to, limit: 500 });
      if (page.length === 0) return;
      for (const event of page) {
        this.cursor = event.position;
        react(event);
      }
    }
  }
}
