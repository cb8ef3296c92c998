import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import { Engine } from './engine.js';
import type { AnyProjection } from './projection.js';
import { readAll } from './store.js';

/**
 * Time travel (`colony replay`): the log up to a position, applied by the same projection code to a
 * fresh in-memory database, which then answers the same queries the live one does. Nothing is written
 * to the source; the chain is not re-hashed (`colony verify` checks it).
 */
const PAGE = 5000;

export function replayTo(source: Database, position: number, projections: readonly AnyProjection[]): Engine {
  const mem = Engine.open({ file: ':memory:', durability: 'normal', projections });
  try {
    mem.db.transaction(() => {
      let after = 0;
      for (;;) {
        const page = readAll(source, { after, to: position, limit: PAGE });
        if (page.length === 0) break;
        mem.projections.apply(mem.db, page);
        after = page[page.length - 1]!.position;
        if (page.length < PAGE) break;
      }
    })();
    return mem;
  } catch (e) {
    mem.close();
    throw e;
  }
}

/** The last position recorded at or before `iso` (0 when the log starts later). */
export function positionAt(db: Database, iso: string): number {
  const row = prepared(db, 'SELECT max(position) AS p FROM es_events WHERE recorded_at <= ?').get(iso) as {
    p: number | null;
  };
  return row.p ?? 0;
}
