import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { clearPrepared, prepared } from './db.js';
import { applySteps } from './projection-sql.js';
import { STORED_EVENT_COLUMNS, STORED_EVENT_COLUMNS_NO_META, type StoredEventRow } from './event.js';
import { readHead, readPage, toStoredEvent } from './store.js';
import { materializePositions } from './anchor.js';
import {
  handlesType,
  resetTables,
  shadowNames,
  SHADOW_MARK,
  type AnyProjection,
  type TableNames,
} from './projection.js';

/**
 * Rebuild (blue-green): the projections are rebuilt from the log into shadow tables, one write
 * transaction per page of events, while the live tables keep serving readers and inline writers.
 * The last transaction applies whatever was appended meanwhile, drops the live tables and renames the
 * shadows into their place, so a reader sees the old tables or the new ones, never a half-built one.
 * A crash mid-way leaves only shadow tables, which the next rebuild drops.
 */
export interface RebuildOptions {
  /** Events per page (and per transaction). */
  pageSize?: number;
  onProgress?: (done: number, total: number) => void;
  now?: () => Date;
}

export interface RebuildReport {
  projections: string[];
  events: number;
  seconds: number;
  eventsPerSecond: number;
}

interface Target {
  p: AnyProjection;
  t: TableNames<string>;
}

export function rebuildProjections(
  db: Database,
  projections: readonly AnyProjection[],
  options: RebuildOptions = {},
): RebuildReport {
  const started = process.hrtime.bigint();
  const pageSize = options.pageSize ?? 10_000;
  dropShadowTables(db);
  const nonce = randomBytes(4).toString('hex');
  const targets: Target[] = projections.map((p) => ({ p, t: shadowNames(p, nonce) }));
  db.transaction(() => targets.forEach(({ p, t }) => db.exec(p.init(t, 'sqlite')))).immediate();

  let position = 0;
  const total = () => readHead(db).position;
  const applyPage = db.transaction((after: number) => applyRows(db, targets, readRows(db, targets, after, pageSize)));
  for (;;) {
    const page = applyPage.immediate(position);
    position = page.last ?? position;
    options.onProgress?.(position, total());
    if (page.count < pageSize) break;
  }
  const events = db
    .transaction(() => {
      for (let page = applyRows(db, targets, readRows(db, targets, position, pageSize)); page.last;) {
        position = page.last;
        page = applyRows(db, targets, readRows(db, targets, position, pageSize));
      }
      swapIn(db, targets, position, (options.now ?? (() => new Date()))().toISOString());
      return position;
    })
    .immediate();
  clearPrepared(db);
  options.onProgress?.(events, events);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    projections: projections.map((p) => p.name),
    events,
    seconds,
    eventsPerSecond: seconds > 0 ? events / seconds : events,
  };
}

function readRows(db: Database, targets: readonly Target[], after: number, limit: number): StoredEventRow[] {
  const columns = targets.some(({ p }) => p.readsMeta) ? STORED_EVENT_COLUMNS : STORED_EVENT_COLUMNS_NO_META;
  return readPage<StoredEventRow>(db, columns, { after, limit });
}

// Which targets want an event type, computed once per type for the whole rebuild.
const wantedBy = new WeakMap<readonly Target[], Map<string, readonly Target[]>>();

function applyRows(
  db: Database,
  targets: readonly Target[],
  rows: readonly StoredEventRow[],
): { count: number; last: number | null } {
  let byType = wantedBy.get(targets);
  if (!byType) wantedBy.set(targets, (byType = new Map()));
  for (const row of rows) {
    let wanted = byType.get(row.type);
    if (!wanted) byType.set(row.type, (wanted = targets.filter(({ p }) => handlesType(p, row.type))));
    if (wanted.length === 0) continue;
    const event = toStoredEvent(row);
    for (const { p, t } of wanted) applySteps(db, p.apply(event, t));
  }
  return { count: rows.length, last: rows[rows.length - 1]?.position ?? null };
}

function swapIn(db: Database, targets: readonly Target[], position: number, at: string): void {
  materializePositions(db); // positions are set row by row now (engine/projection-positions.ts)
  for (const { p, t } of targets) {
    resetTables(db, p, Object.fromEntries(p.tables.map((x: string) => [x, x])));
    for (const table of p.tables) db.exec(`ALTER TABLE "${t[table]}" RENAME TO "${table}"`);
    prepared(
      db,
      `INSERT INTO es_projections (name, version, position, stale, rebuilt_at) VALUES (?, ?, ?, 0, ?)
       ON CONFLICT(name) DO UPDATE SET version = excluded.version, position = excluded.position, stale = 0,
         rebuilt_at = excluded.rebuilt_at`,
    ).run(p.name, p.version, position, at);
  }
}

/** Applies the events a lagging projection missed, page by page, to its live tables. */
export function catchUpProjection(
  db: Database,
  p: AnyProjection,
  t: TableNames<string>,
  from: number,
  pageSize = 10_000,
): void {
  const target = [{ p, t }];
  const step = db.transaction((after: number) => {
    const page = applyRows(db, target, readRows(db, target, after, pageSize));
    materializePositions(db);
    if (page.last) prepared(db, 'UPDATE es_projections SET position = ? WHERE name = ?').run(page.last, p.name);
    return page;
  });
  for (let page = step.immediate(from); page.last && page.count === pageSize; page = step.immediate(page.last));
}

/** Drops shadow tables a crashed rebuild left behind (virtual tables first: they own their internals). */
export function dropShadowTables(db: Database): void {
  const rows = db
    .prepare(
      `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND instr(name, ?) > 0 ORDER BY (sql LIKE 'CREATE VIRTUAL%') DESC`,
    )
    .all(SHADOW_MARK) as { name: string; sql: string | null }[];
  if (rows.length === 0) return;
  db.transaction(() => rows.forEach((r) => db.exec(`DROP TABLE IF EXISTS "${r.name}"`))).immediate();
}
