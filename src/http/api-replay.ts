import Sqlite, { type Database } from 'better-sqlite3';
import { productProjections } from '../app.js';
import { readAll } from '../engine/store.js';
import { goalSnapshot } from '../projections/goal-snapshot.js';
import { ProjectionRegistry } from '../engine/projection-registry.js';
import { replayTo } from '../engine/replay.js';

/**
 * Time travel fast enough for a slider (`GET /api/goals/:id/replay?position=N`): the same projection code
 * as `colony replay` (engine/replay.ts) applied to an in-memory database, but kept between requests.
 * Each goal being scrubbed has a cursor — a replayed database at some position — that moves forward by
 * applying only the events in between. Every CHECKPOINT_EVERY positions the replayed database is
 * serialized (`db.serialize()`); a step backwards opens the nearest checkpoint at or below the target
 * (`new Database(buffer)`) and replays the rest. A replayed database is the whole store at that
 * position, not one goal's, so checkpoints are shared by every goal; the least recently used go past
 * MAX_CHECKPOINT_BYTES, cursors past MAX_CURSORS. The log only grows, so nothing cached goes stale.
 */
export const CHECKPOINT_EVERY = 1000;
export const MAX_CURSORS = 8;
export const MAX_CHECKPOINT_BYTES = 256 * 1024 * 1024;
const PAGE = 5000;

interface Cursor {
  db: Database;
  position: number;
}

export class ReplayCache {
  private readonly registry = new ProjectionRegistry(productProjections);
  private readonly checkpoints = new Map<number, Buffer>();
  private checkpointBytes = 0;
  private readonly cursors = new Map<number, Cursor>();

  constructor(
    private readonly source: Database,
    private readonly every = CHECKPOINT_EVERY,
  ) {}

  /** The goal's snapshot as it was at `position` (≤ the head); null when the goal did not exist yet. */
  snapshotAt(goalId: number, position: number): ReturnType<typeof goalSnapshot> {
    return goalSnapshot(this.at(goalId, position), goalId);
  }

  close(): void {
    for (const c of this.cursors.values()) c.db.close();
    this.cursors.clear();
    this.checkpoints.clear();
    this.checkpointBytes = 0;
  }

  private at(goalId: number, position: number): Database {
    let cursor = this.cursors.get(goalId);
    this.cursors.delete(goalId);
    // Backwards, or forwards past a checkpoint: opening the checkpoint beats applying everything up to it.
    if (!cursor || cursor.position > position || this.nearestCheckpoint(position) > cursor.position) {
      cursor?.db.close();
      cursor = this.restore(position);
    }
    this.advance(cursor, position);
    this.cursors.set(goalId, cursor);
    while (this.cursors.size > MAX_CURSORS) {
      const [oldest, c] = this.cursors.entries().next().value!;
      c.db.close();
      this.cursors.delete(oldest);
    }
    return cursor.db;
  }

  /** A database at the nearest checkpoint at or below `position` (position 0: the empty schema). */
  private nearestCheckpoint(position: number): number {
    let base = Math.floor(position / this.every) * this.every;
    while (base > 0 && !this.checkpoints.has(base)) base -= this.every;
    return base;
  }

  private restore(position: number): Cursor {
    const base = this.nearestCheckpoint(position);
    if (base === 0 && !this.checkpoints.has(0)) {
      const empty = replayTo(this.source, 0, productProjections);
      this.keep(0, empty.db.serialize());
      empty.close();
    }
    const buffer = this.checkpoints.get(base)!;
    this.checkpoints.delete(base); // most recently used last
    this.checkpoints.set(base, buffer);
    return { db: new Sqlite(buffer), position: base };
  }

  /** Applies the events after the cursor up to `to`, leaving a checkpoint at each boundary it passes. */
  private advance(cursor: Cursor, to: number): void {
    while (cursor.position < to) {
      const boundary = (Math.floor(cursor.position / this.every) + 1) * this.every;
      const stop = Math.min(to, boundary);
      cursor.db.transaction(() => {
        for (let after = cursor.position; after < stop;) {
          const page = readAll(this.source, { after, to: stop, limit: PAGE });
          if (page.length === 0) break;
          this.registry.apply(cursor.db, page);
          after = page[page.length - 1]!.position;
        }
      })();
      cursor.position = stop;
      if (stop === boundary && !this.checkpoints.has(stop)) this.keep(stop, cursor.db.serialize());
    }
  }

  private keep(position: number, buffer: Buffer): void {
    this.checkpoints.set(position, buffer);
    this.checkpointBytes += buffer.length;
    for (const [p, b] of this.checkpoints) {
      if (this.checkpointBytes <= MAX_CHECKPOINT_BYTES) break;
      if (p === 0 || p === position) continue;
      this.checkpoints.delete(p);
      this.checkpointBytes -= b.length;
    }
  }
}
