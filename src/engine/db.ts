import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database, Statement } from 'better-sqlite3';

/**
 * Opening the database and migrating its schema. The store is SQLite through better-sqlite3; the rest of
 * Colony holds its `Database` and speaks plain SQL to it (the log's through `engine/store.ts`).
 */
export type { Database } from 'better-sqlite3';

/** `full` (default) survives power loss; `normal` may lose the last commits on an OS crash (WAL+NORMAL). */
export type Durability = 'full' | 'normal';

export interface OpenOptions {
  durability?: Durability;
  busyTimeoutMs?: number;
  readonly?: boolean;
}

export interface Migration {
  /** The `PRAGMA user_version` this migration brings the database to. */
  version: number;
  up(db: Database): void;
}

export function openDatabase(file: string, options: OpenOptions = {}): Database {
  if (file !== ':memory:' && !options.readonly) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new BetterSqlite3(file, {
    timeout: options.busyTimeoutMs ?? 5000,
    readonly: options.readonly ?? false,
    fileMustExist: options.readonly ?? false,
  });
  if (!options.readonly) db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${(options.durability ?? 'full') === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('foreign_keys = ON');
  // Without this, INSERT OR REPLACE deletes a row without firing the append-only DELETE trigger.
  db.pragma('recursive_triggers = ON');
  // Streams interleave in the log, so loading one touches many pages: a 64 MiB page cache keeps the hot ones.
  db.pragma('cache_size = -65536');
  db.pragma('wal_autocheckpoint = 10000');
  return db;
}

/**
 * Runs every migration above the stored `user_version`, each in its own IMMEDIATE transaction with the
 * version bump, so a crash between two migrations resumes at the right one.
 */
export function migrate(db: Database, migrations: readonly Migration[]): number {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  let current = userVersion(db);
  for (const m of sorted) {
    if (m.version <= current) continue;
    db.transaction(() => {
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
    current = m.version;
  }
  return current;
}

export const userVersion = (db: Database): number => db.pragma('user_version', { simple: true }) as number;

const statementCache = new WeakMap<Database, Map<string, Statement>>();

/** Prepared statements are cached per connection: preparing costs more than running a small one. */
export function prepared(db: Database, sql: string): Statement {
  let cache = statementCache.get(db);
  if (!cache) {
    cache = new Map();
    statementCache.set(db, cache);
  }
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    cache.set(sql, stmt);
  }
  return stmt;
}

const readers = new WeakMap<Database, <T>(fn: () => T) => T>();

/**
 * Runs `fn` — several reads that must agree with each other — in one read transaction, so that a
 * commit by another connection (another process on the same data dir) cannot land between them.
 * Inside a transaction already open on `db` it joins it (a savepoint).
 */
export function readConsistent<T>(db: Database, fn: () => T): T {
  let run = readers.get(db);
  if (!run) {
    run = db.transaction((f: () => unknown) => f()) as <U>(f: () => U) => U;
    readers.set(db, run);
  }
  return run(fn);
}

/** Drops cached statements, e.g. after a rebuild renamed tables (the shadow names are never used again). */
export function clearPrepared(db: Database): void {
  statementCache.delete(db);
}
