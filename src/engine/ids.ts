import { randomFillSync } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';

/**
 * New ids for a command. Ids shown to users are integers per kind (`task` 1, 2, 3…), allocated inside
 * the command's transaction so they are gap-free and never reused.
 *
 * To `decide` this is a plain counter handed in with the command (deciders are pure): it does no I/O that the
 * decision could observe. The engine reads each kind's high-water mark on first use and writes the new
 * one back after `decide` returns, inside the same transaction, so a rolled-back command leaves no gap.
 */
export interface IdAllocator {
  next(kind: string): number;
}

export interface TrackedIds extends IdAllocator {
  /** Persist what was handed out. Called by the engine after a successful decide. */
  flush(): void;
  /** The counters now, to undo to when a savepoint rolls back (so the outer command skips no id). */
  mark(): ReadonlyMap<string, number>;
  undo(mark: ReadonlyMap<string, number>): void;
}

export function sequenceIds(db: Database): TrackedIds {
  const high = new Map<string, number>();
  const dirty = new Set<string>();
  return {
    next(kind) {
      let value = high.get(kind);
      if (value === undefined) {
        const row = prepared(db, 'SELECT value FROM es_sequences WHERE name = ?').get(kind) as
          { value: number } | undefined;
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
    mark: () => new Map(high),
    undo(mark) {
      high.clear();
      for (const [kind, value] of mark) high.set(kind, value);
    },
  };
}

/** Every kind's high-water mark. */
export function sequenceMarks(db: Database): Map<string, number> {
  const rows = prepared(db, 'SELECT name, value FROM es_sequences').all() as { name: string; value: number }[];
  return new Map(rows.map((r) => [r.name, r.value]));
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

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Time-ordered ids land at the
 * right edge of the command-id index instead of on a random page, which keeps each commit's write small.
 */
export function newCommandId(now = Date.now()): string {
  const b = randomTail();
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// Random bytes drawn from a pool refilled 4 KiB at a time: one crypto call per ~400 ids, not one per id.
const pool = Buffer.alloc(4096);
let used = pool.length;
/** 16 bytes whose last 10 are random (the first 6 are for the timestamp). */
function randomTail(): Buffer {
  if (used + 10 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const out = Buffer.alloc(16);
  pool.copy(out, 6, used, used + 10);
  used += 10;
  return out;
}
