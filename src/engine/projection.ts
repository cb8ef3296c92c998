import type { Database } from 'better-sqlite3';
import type { Event, StoredEvent } from './event.js';
import type { Dialect, DialectSql, Steps } from './projection-sql.js';

/**
 * A projection turns events into read tables, inside the transaction that appended them, so a read table
 * is never behind or ahead of the log.
 *
 * Rules every projection keeps:
 * - It never rejects an event: it upserts, skips duplicates and clamps. A throw is a bug (it fails the
 *   command that appended the event, which is the safe outcome).
 * - It derives everything from events. It never reads another projection's tables while applying: a
 *   rebuild of one projection alone must give the same rows as the incremental run.
 * - Every name it creates in the database — tables, indexes, triggers — is derived from `t`, the
 *   physical names for this run. A rebuild passes shadow names, fills them from the log, and swaps them
 *   in; query functions read the live names (`tables` as declared).
 * - Bump `version` whenever the DDL or the apply logic changes: on start the projection is rebuilt.
 * - One definition serves both stores: `init` returns DDL and `apply` yields statements
 *   (engine/projection-sql.ts), written in the SQL both SQLite and PostgreSQL speak, per dialect only
 *   where they cannot share it.
 */
export type TableNames<T extends string> = Readonly<Record<T, string>>;

export interface Projection<E extends Event = Event, T extends string = string> {
  readonly name: string;
  readonly version: number;
  /** Event types this projection applies, or `'all'`. */
  readonly handles: readonly E['type'][] | 'all';
  /**
   * Set when `apply` reads `event.meta` (actor, command id…). A rebuild reads the meta column only for
   * projections that say so — it is a third of each row — and `meta` throws for the others there.
   */
  readonly readsMeta?: boolean;
  /** The tables it owns, by their live names. */
  readonly tables: readonly T[];
  /** The DDL that creates its tables and indexes under the names in `t`. */
  init(t: TableNames<T>, dialect: Dialect): string;
  /** The statements that apply one event to the tables named in `t`. */
  apply(event: StoredEvent<E>, t: TableNames<T>): Steps<unknown>;
  /** DDL that removes its tables (and anything else it created) under the names in `t`. Default: DROP each table. */
  reset?(t: TableNames<T>, dialect: Dialect): string;
}

// The registry stores projections of every domain side by side; their event types only meet at runtime,
// where `handles` filters what each one receives.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyProjection = Projection<any, any>;

export function liveNames(p: { readonly tables: readonly string[] }): TableNames<string> {
  return Object.fromEntries(p.tables.map((t: string) => [t, t]));
}

export function shadowNames(p: { readonly tables: readonly string[] }, nonce: string): TableNames<string> {
  return Object.fromEntries(p.tables.map((t: string) => [t, `${t}__rebuild_${nonce}`]));
}

export const SHADOW_MARK = '__rebuild_';

export function resetTables(db: Database, p: AnyProjection, t: TableNames<string>): void {
  db.exec(resetSql(p, t, 'sqlite'));
}

export function resetSql(p: AnyProjection, t: TableNames<string>, dialect: Dialect): string {
  if (p.reset) return p.reset(t, dialect);
  return p.tables.map((table: string) => `DROP TABLE IF EXISTS "${t[table]}";`).join('\n');
}

export const handlesType = (p: AnyProjection, type: string): boolean =>
  p.handles === 'all' || (p.handles as readonly string[]).includes(type);

/**
 * Builds a projection's SQL once per set of table names (live or a rebuild's shadows) instead of once
 * per event: `const sql = sqlFor((t) => ({ insert: \`INSERT INTO "\${t.cards}" …\` }))`, then
 * `prepared(db, sql(t).insert)` in apply. The same string object each time keeps the statement cache hot.
 */
export function sqlFor<T extends string, Q extends Record<string, DialectSql>>(
  build: (t: TableNames<T>) => Q,
): (t: TableNames<T>) => Q {
  const cache = new WeakMap<TableNames<T>, Q>();
  return (t) => {
    let q = cache.get(t);
    if (!q) {
      q = build(t);
      cache.set(t, q);
    }
    return q;
  };
}
