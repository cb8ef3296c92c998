import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';

/**
 * New ids for a command. Ids shown to users are integers per kind (`task` 1, 2, 3…), allocated inside
 * the command's transaction so they are gap-free and never reused.
 *
 * To `decide` this is a plain counter handed in with the command (rule 2): it does no I/O that the
 * decision could observe. The engine reads each kind's high-water mark on first use and writes the new
 * one back after `decide` returns, inside the same transaction, so a rolled-back command leaves no gap.
 */
export interface IdAllocator {
  next(kind: string): number;
}

export interface TrackedIds extends IdAllocator {
  /** Persist what was handed out. Called by the engine after a successful decide. */
  flush(): void;
}

export function sequenceIds(db: Database): TrackedIds {
  const high = new Map<string, number>();
  const dirty = new Set<string>();
  return {
    next(kind) {
      let value = high.get(kind);
      if (value === undefined) {
        const row = prepared(db, 'SELECT value FROM es_sequences WHERE name = ?').get(kind) as
          | { value: number }
          | undefined;
        value = row?.value ?? 0;
      }
      value += 1;
      high.set(kind, value);
      dirty.add(kind);
      return value;
    },
    flush() {
      const upsert = prepared(
        db,
        'INSERT INTO es_sequences (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value',
      );
      for (const kind of dirty) upsert.run(kind, high.get(kind));
      dirty.clear();
    },
  };
}

/** In-memory counters for decider specs and fixtures: 1, 2, 3… per kind. */
export function memoryIds(start: Readonly<Record<string, number>> = {}): IdAllocator {
  const high = new Map(Object.entries(start));
  return {
    next(kind) {
      const value = (high.get(kind) ?? 0) + 1;
      high.set(kind, value);
      return value;
    },
  };
}

export const newCommandId = (): string => randomUUID();
