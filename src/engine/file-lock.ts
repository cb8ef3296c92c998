import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * An exclusive lock on a file that the kernel drops however the process ends, kill -9 included: an open
 * `BEGIN EXCLUSIVE` on a small SQLite file (a POSIX lock). Used for the data dir's lock (cli/data-lock.ts)
 * and a node's copy slots (pg/copy-file.ts). better-sqlite3 is loaded on first use, not at import.
 */
export interface FileLock {
  /** Ends the transaction; the lock goes with it. Safe to call twice. */
  release(): void;
}

const require = createRequire(import.meta.url);
/** A strong reference to every held connection: a collected one would close, and its lock with it. */
const held = new Set<BetterSqlite3.Database>();

/** Takes the lock if no other process holds it (never waits): null when one does. */
export function tryFileLock(file: string): FileLock | null {
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  const db = new Database(file, { timeout: 0 });
  try {
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === 'SQLITE_BUSY') return null;
    throw e;
  }
  held.add(db);
  return {
    release() {
      held.delete(db);
      if (db.open) db.close();
    },
  };
}
