import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { liveNames, shadowNames, type TableNames } from '../projection.js';
import { LOG_START, type LogCursor, type TenantEvent } from '../store-port.js';
import { inTransaction } from './connect.js';
import { orderedRead, tenantEvent, type PgEventRow } from './rows.js';

/**
 * Read models on PostgreSQL. As on SQLite (engine/projection.ts): a projection is applied in the
 * append's transaction, so it is never behind or ahead of the log; it owns tables whose physical names
 * come from `t`; bumping `version` rebuilds it on the next open.
 *
 * A rebuild fills shadow tables from the log while every node keeps appending, then catches up and swaps
 * them in under the projections lock: appends take it shared (pg/chain.ts beginLocked), the swap takes
 * it exclusively, so at the swap no append is in flight and the shadow misses nothing.
 */
export interface PgProjection {
  readonly name: string;
  readonly version: number;
  readonly tables: readonly string[];
  init(client: pg.ClientBase, t: TableNames<string>): Promise<void>;
  apply(client: pg.ClientBase, events: readonly TenantEvent[], t: TableNames<string>): Promise<void>;
}

/** The advisory lock key appends share and a rebuild's swap holds alone. */
export const PROJECTIONS_LOCK = 0x636f6c70; // 'colp'

const PAGE = 5000;

export interface PgRebuildReport {
  rebuilt: string[];
  events: number;
}

/** Rebuilds every projection that is new or whose version changed (all of `force`). */
export async function ensurePgProjections(
  pool: pg.Pool,
  projections: readonly PgProjection[],
  force: readonly string[] = [],
): Promise<PgRebuildReport> {
  const known = await pool.query<{ name: string; version: number }>('SELECT name, version FROM es_projections');
  const versions = new Map(known.rows.map((r) => [r.name, r.version]));
  const report: PgRebuildReport = { rebuilt: [], events: 0 };
  for (const p of projections) {
    if (versions.get(p.name) === p.version && !force.includes(p.name)) continue;
    const done = await rebuildPgProjection(pool, p, force.includes(p.name));
    if (done !== null) report.rebuilt.push(p.name);
    report.events += done ?? 0;
  }
  return report;
}

/** The rebuild of one projection; null when another node finished the same rebuild first. */
async function rebuildPgProjection(pool: pg.Pool, p: PgProjection, forced: boolean): Promise<number | null> {
  const shadow = shadowNames(p, randomBytes(4).toString('hex'));
  await inTransaction(pool, (client) => p.init(client, shadow));
  let cursor = LOG_START;
  let events = 0;
  try {
    // Bulk: pages of the ordered read, each in its own transaction; appends go on meanwhile.
    for (;;) {
      const page = await pool.query<PgEventRow>(orderedRead(true), [cursor.txid, cursor.seq, PAGE]);
      if (page.rows.length === 0) break;
      cursor = await applyPage(pool, p, page.rows, shadow);
      events += page.rows.length;
    }
    return await inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [PROJECTIONS_LOCK]);
      const current = await client.query<{ version: number }>('SELECT version FROM es_projections WHERE name = $1', [
        p.name,
      ]);
      if (!forced && current.rows[0]?.version === p.version) {
        await drop(client, p, shadow);
        return null;
      }
      // No append is in flight now: everything after the cursor has committed, fence or not.
      for (;;) {
        const rest = await client.query<PgEventRow>(orderedRead(false), [cursor.txid, cursor.seq, PAGE]);
        if (rest.rows.length === 0) break;
        const batch = rest.rows.map(tenantEvent);
        await p.apply(client, batch, shadow);
        cursor = batch[batch.length - 1]!.cursor;
        events += batch.length;
      }
      const live = liveNames(p);
      await drop(client, p, live);
      for (const table of p.tables) await client.query(`ALTER TABLE "${shadow[table]}" RENAME TO "${live[table]}"`);
      await client.query(
        `INSERT INTO es_projections (name, version, rebuilt_at) VALUES ($1, $2, now())
         ON CONFLICT (name) DO UPDATE SET version = excluded.version, rebuilt_at = excluded.rebuilt_at`,
        [p.name, p.version],
      );
      return events;
    });
  } catch (e) {
    await inTransaction(pool, (client) => drop(client, p, shadow)).catch(() => undefined);
    throw e;
  }
}

async function applyPage(
  pool: pg.Pool,
  p: PgProjection,
  rows: PgEventRow[],
  t: TableNames<string>,
): Promise<LogCursor> {
  const events = rows.map(tenantEvent);
  await inTransaction(pool, (client) => p.apply(client, events, t));
  return events[events.length - 1]!.cursor;
}

async function drop(client: pg.ClientBase, p: PgProjection, t: TableNames<string>): Promise<void> {
  for (const table of p.tables) await client.query(`DROP TABLE IF EXISTS "${t[table]}"`);
}
