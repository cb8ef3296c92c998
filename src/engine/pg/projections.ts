import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { StoredEvent } from '../event.js';
import { handlesType, liveNames, resetSql, shadowNames, type AnyProjection, type TableNames } from '../projection.js';
import { DomainError } from '../../errors.js';
import { inTransaction } from './connect.js';
import { toPostgres } from './dialect.js';
import { buildInMemory } from './memory-build.js';
import { applyStepsPg } from './projection-driver.js';
import { toStoredEvent } from '../store.js';
import { readWholeTenantRows } from './rows.js';

/**
 * Read models on PostgreSQL: the same projections as on SQLite (one definition, engine/projection.ts),
 * each tenant's in a schema of its own. A SQLite file is one team's read models; a tenant's schema is
 * the same tables with the same SQL, and each transaction that touches them sets its search_path to
 * `<tenant schema>, <store schema>`. Keys stay per tenant (stream ids, task ids…) without a tenant
 * column in every table and every query.
 *
 * As on SQLite, a projection is applied in the append's transaction, so it is never behind or ahead
 * of the log, and a new or bumped projection (by `version`) is rebuilt from the tenant's chain into
 * shadow tables while appends go on, then caught up and swapped in under the tenant's chain lock — the
 * lock every append of the tenant holds — so nothing is missed and other tenants never wait.
 */
export interface PgRebuildReport {
  rebuilt: string[];
  events: number;
}

const PAGE = 2000;

export class PgReadModels {
  /** Tenants whose read schema this process has brought up to date. */
  private readonly current = new Set<string>();
  /** Each tenant's read-model epoch as this process last saw it: every rebuild moves it on. */
  private readonly epochs = new Map<string, number>();

  constructor(
    private readonly storeSchema: string,
    readonly projections: readonly AnyProjection[],
    /** The statement that begins a transaction holding a tenant's chain lock (pg/chain.ts). */
    private readonly beginLocked: (tenant: string) => string,
  ) {
    // The store's tables share the search_path: a read model named like one would shadow it, or be
    // dropped in its place by a rebuild.
    for (const p of projections)
      for (const table of p.tables as string[])
        if (/^(es|rm)_/.test(table)) throw new Error(`projection ${p.name}: table names es_* and rm_* are the store's`);
  }

  /** The schema of a tenant's read models: derived from its name, the same on every node. */
  schemaOf(tenant: string): string {
    return readSchema(this.storeSchema, tenant);
  }

  /** The tenant's read-model epoch as this process last saw it (null: it keeps no read models). */
  epochOf(tenant: string): number | null {
    return this.projections.length === 0 ? null : (this.epochs.get(tenant) ?? 0);
  }

  /** `SET LOCAL search_path` for a transaction on the tenant's read models. */
  searchPath(tenant: string): string {
    return `SET LOCAL search_path TO "${this.schemaOf(tenant)}", "${this.storeSchema}"`;
  }

  /** Applies events to the live tables; call it inside the append's transaction, after `searchPath`. */
  async apply(client: pg.ClientBase, events: readonly StoredEvent[]): Promise<void> {
    for (const e of events) {
      for (const p of this.projections) {
        if (handlesType(p, e.type)) await applyStepsPg(client, p.apply(e, liveNames(p)));
      }
    }
  }

  /**
   * Creates the tenant's read schema, or rebuilds what is new, bumped, or named in `force`. Cheap once
   * done in this process; every node runs it before its first append of a tenant.
   */
  async prepare(pool: pg.Pool, tenant: string, force: readonly string[] = []): Promise<PgRebuildReport> {
    const report: PgRebuildReport = { rebuilt: [], events: 0 };
    if (this.projections.length === 0 || (this.current.has(tenant) && force.length === 0)) return report;
    const schema = this.schemaOf(tenant);
    const stored = await inTransaction(
      pool,
      async (client) => {
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS "${schema}".rm_projections (name text PRIMARY KEY, version integer NOT NULL,
             rebuilt_at timestamptz NOT NULL);
           CREATE TABLE IF NOT EXISTS "${schema}".rm_tenant (tenant text NOT NULL);
           ALTER TABLE "${schema}".rm_tenant ADD COLUMN IF NOT EXISTS epoch integer NOT NULL DEFAULT 0`,
        );
        await client.query(
          `INSERT INTO "${schema}".rm_tenant (tenant) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM "${schema}".rm_tenant)`,
          [tenant],
        );
        const rows = await client.query<{ name: string; version: number }>(
          `SELECT name, version FROM "${schema}".rm_projections`,
        );
        return new Map(rows.rows.map((r) => [r.name, r.version]));
      },
      this.beginLocked(tenant),
    );
    this.refuseNewer(tenant, stored);
    const outdated = this.projections.filter((p) => stored.get(p.name) !== p.version || force.includes(p.name));
    if (outdated.length > 0) {
      report.events = await this.rebuild(pool, tenant, outdated);
      report.rebuilt = outdated.map((p) => p.name);
    }
    const epoch = await pool.query<{ epoch: number }>(`SELECT epoch FROM "${schema}".rm_tenant`);
    this.epochs.set(tenant, epoch.rows[0]?.epoch ?? 0);
    this.current.add(tenant);
    return report;
  }

  /**
   * Under the tenant's lock, before a write, with the epoch read there (pg/locked-state.ts): a rebuild by another node since this one prepared (a node
   * of newer code, with a bumped projection) is found here. Read models built by newer code are never
   * written by older code — the write is refused (ErrReadModelNewer) until this node is upgraded.
   */
  async checkEpoch(client: pg.ClientBase, tenant: string, epoch: number): Promise<void> {
    if (epoch === this.epochs.get(tenant)) return;
    const rows = await client.query<{ name: string; version: number }>('SELECT name, version FROM rm_projections');
    const stored = new Map(rows.rows.map((r) => [r.name, r.version]));
    this.refuseNewer(tenant, stored);
    if (this.projections.some((p) => stored.get(p.name) !== p.version))
      throw new DomainError(
        'ErrReadModelChanged',
        `tenant ${tenant}'s read models changed under this node: restart it`,
      );
    this.epochs.set(tenant, epoch);
  }

  private refuseNewer(tenant: string, stored: ReadonlyMap<string, number>): void {
    const newer = this.projections.filter((p) => (stored.get(p.name) ?? 0) > p.version);
    if (newer.length === 0) return;
    const which = newer.map((p) => `${p.name} ${stored.get(p.name)} (this node: ${p.version})`).join(', ');
    throw new DomainError(
      'ErrReadModelNewer',
      `tenant ${tenant}'s read models were built by newer code — ${which}: upgrade this node; older code never writes to them`,
      { tenant },
    );
  }

  /** Brings these tenants' read models up to date with the code: what was rebuilt, summed. */
  async prepareAll(pool: pg.Pool, tenants: readonly string[], force: readonly string[]): Promise<PgRebuildReport> {
    const report: PgRebuildReport = { rebuilt: [], events: 0 };
    for (const tenant of tenants) {
      const done = await this.prepare(pool, tenant, force);
      for (const name of done.rebuilt) if (!report.rebuilt.includes(name)) report.rebuilt.push(name);
      report.events += done.events;
    }
    return report;
  }

  /** Fills shadow tables from the tenant's chain, then catches up and swaps them in under its lock. */
  private async rebuild(pool: pg.Pool, tenant: string, targets: readonly AnyProjection[]): Promise<number> {
    const nonce = randomBytes(4).toString('hex');
    const shadows = targets.map((p) => ({ p, t: shadowNames(p, nonce) }));
    const begin = `BEGIN; ${this.searchPath(tenant)}`;
    await inTransaction(
      pool,
      (client) => client.query(shadows.map(({ p, t }) => ddl(p.init(t, 'postgres'))).join(';\n')),
      begin,
    );
    let position = 0;
    let events = 0;
    const applyPage = async (client: pg.ClientBase): Promise<number> => {
      // Under the tenant's lock: a page short of its recorded head is a hole, refused (ErrChainBroken).
      const rows = await readWholeTenantRows(client, tenant, position, PAGE);
      for (const row of rows) {
        const e = toStoredEvent(row);
        for (const { p, t } of shadows) if (handlesType(p, e.type)) await applyStepsPg(client, p.apply(e, t));
        position = e.position;
      }
      events += rows.length;
      return rows.length;
    };
    try {
      // The bulk in memory, then copied in (pg/memory-build.ts): the tenant's appends go on meanwhile.
      ({ position, events } = await buildInMemory(pool, this.schemaOf(tenant), tenant, this.projections, shadows));
      await inTransaction(
        pool,
        async (client) => {
          await client.query(this.searchPath(tenant));
          // The tenant's appends wait now: what follows the last page is all committed.
          while ((await applyPage(client)) === PAGE);
          for (const { p, t } of shadows) {
            const live = liveNames(p);
            await client.query(ddl(resetSql(p, live, 'postgres')));
            for (const table of p.tables) await client.query(`ALTER TABLE "${t[table]}" RENAME TO "${live[table]}"`);
            await client.query(
              `INSERT INTO rm_projections (name, version, rebuilt_at) VALUES ($1, $2, now())
               ON CONFLICT (name) DO UPDATE SET version = excluded.version, rebuilt_at = excluded.rebuilt_at`,
              [p.name, p.version],
            );
          }
          // Every node's next write checks this (checkEpoch): tables swapped under it are never written blind.
          await client.query('UPDATE rm_tenant SET epoch = epoch + 1');
        },
        this.beginLocked(tenant),
      );
      return events;
    } catch (e) {
      await inTransaction(pool, (client) => dropAll(client, shadows), begin).catch(() => undefined);
      throw e;
    }
  }
}

async function dropAll(client: pg.ClientBase, shadows: { p: AnyProjection; t: TableNames<string> }[]): Promise<void> {
  for (const { p, t } of shadows) await client.query(ddl(resetSql(p, t, 'postgres')));
}

/** A projection's DDL (written for both dialects) as PostgreSQL takes it. */
const ddl = (sql: string): string => toPostgres(sql).text;

/**
 * `<store schema>_rm_<16 hex of sha256(tenant)>`: a tenant's name may be any text, a schema's may not,
 * and two tenants must never share one. The store schema is cut to 40 characters (names stop at 63).
 */
export function readSchema(storeSchema: string, tenant: string): string {
  return `${storeSchema.slice(0, 40)}_rm_${createHash('sha256').update(tenant).digest('hex').slice(0, 16)}`;
}
