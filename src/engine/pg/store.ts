import type pg from 'pg';
import { systemClock, type Clock } from '../../clock.js';
import { DomainError, invalidInput } from '../../errors.js';
import type { EventRow, StoredEvent } from '../event.js';
import { newCommandId } from '../ids.js';
import type { AnyProjection } from '../projection.js';
import { chainRows, checkExpectedVersion, draftAppend, type ChainHead, type ReadStreamOptions } from '../store.js';
import {
  metaOf,
  type AppendRequest,
  type AppendResult,
  type EventStore,
  type LogCursor,
  type ReadPage,
} from '../store-port.js';
import type { VerifyResult } from '../verify.js';
import { beginLocked, eventsOf, readChain, recordEmptyCommand } from './chain.js';
import { inTransaction, openPool } from './connect.js';
import { pgTarget, type PgTarget } from './target.js';
import { importPgRows } from './import.js';
import { orderedRead, readStreamOf, readWholeTenantRows, recordedHead, tenantEvent, type PgEventRow } from './rows.js';
import { PgReadModels, type PgRebuildReport } from './projections.js';
import { migratePg } from './schema.js';
import { claimSequences, raiseSequences, readSequences } from './sequences.js';
import { runPgUnit, writeRows } from './unit.js';
import { verifyPgTenant } from './verify.js';
import type { CommandOptions, TransactResult } from '../handle.js';
import type { Unit } from '../unit-of-work.js';

export interface PgStoreOptions {
  clock?: Clock;
  /** The read models, the same definitions as on SQLite; each tenant's live in a schema of its own. */
  projections?: readonly AnyProjection[];
  /** Connections in this node's pool (default 10). */
  poolSize?: number;
  /** Leave the read models as they are on open (a tool that rebuilds them explicitly next: migrate). */
  skipStartupRebuild?: boolean;
}

/**
 * The store port on PostgreSQL (engine/store-port.ts; tables in pg/schema.ts). Any number of nodes may
 * append at once: a tenant's appends serialize on its chain head row, other tenants' run in parallel.
 */
export class PgEventStore implements EventStore {
  readonly dialect = 'postgres';

  private constructor(
    readonly target: PgTarget,
    readonly pool: pg.Pool,
    private readonly clock: Clock,
    projections: readonly AnyProjection[],
  ) {
    this.readModels = new PgReadModels(target.schema, projections, (tenant) => beginLocked(target.schema, tenant));
  }

  readonly readModels: PgReadModels;

  static async open(url: string, options: PgStoreOptions = {}): Promise<PgEventStore> {
    const target = pgTarget(url);
    const pool = openPool(target, options.poolSize);
    try {
      await migratePg(pool, target.schema);
    } catch (e) {
      await pool.end();
      throw new DomainError(
        'ErrStoreUnavailable',
        `cannot open the store at ${target.display}: ${(e as Error).message}`,
      );
    }
    const store = new PgEventStore(target, pool, options.clock ?? systemClock, options.projections ?? []);
    try {
      if (!options.skipStartupRebuild) store.startupRebuild = await store.prepareAll([]);
    } catch (e) {
      await pool.end();
      throw e;
    }
    return store;
  }

  /** What opening rebuilt: projections that were new or had a new version. */
  startupRebuild: PgRebuildReport = { rebuilt: [], events: 0 };

  /**
   * Rebuilds the named projections (all when none is named) of every tenant, or of one, into shadow
   * tables and swaps them in.
   */
  async rebuild(names: readonly string[] = [], tenant?: string): Promise<PgRebuildReport> {
    const projections = this.readModels.projections;
    const unknown = names.filter((n) => !projections.some((p) => p.name === n));
    if (unknown.length) throw invalidInput(`no projection named ${unknown.join(', ')}`);
    return this.prepareAll(names.length ? names : projections.map((p) => p.name), tenant);
  }

  private async prepareAll(force: readonly string[], tenant?: string): Promise<PgRebuildReport> {
    return this.readModels.prepareAll(this.pool, tenant === undefined ? await this.tenants() : [tenant], force);
  }

  /** The transaction of an append: the tenant's chain lock, and its read models on the search path. */
  private begin(tenant: string): string {
    return beginLocked(
      this.target.schema,
      tenant,
      this.readModels.projections.length ? this.readModels.searchPath(tenant) : undefined,
    );
  }

  async append(request: AppendRequest): Promise<AppendResult> {
    checkTenant(request.tenant);
    const draft = draftAppend(request.streamId, request.events);
    const { tenant, streamId } = request;
    const meta = metaOf(request, request.commandId ?? newCommandId());
    await this.readModels.prepare(this.pool, tenant);
    return inTransaction(
      this.pool,
      async (client) => {
        const chain = await readChain(client, tenant, streamId, request.commandId ?? null);
        if (chain.command) return { events: await eventsOf(client, tenant, chain.command), duplicate: true };
        const { head, version: current } = chain;
        checkExpectedVersion(streamId, request.expected, current);
        if (request.sequences) await claimSequences(client, tenant, request.sequences);
        const at = this.clock().toISOString();
        const command = request.commandId === undefined ? null : { id: meta.commandId, at };
        if (draft.events.length === 0) {
          if (command) await recordEmptyCommand(client, tenant, command);
          return { events: [], duplicate: false };
        }
        const rows = chainRows(head, draft, current, meta, at);
        return { events: await writeRows(client, this.readModels, tenant, rows, meta, command), duplicate: false };
      },
      this.begin(tenant),
    );
  }

  async readStream(tenant: string, streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    return readStreamOf(this.pool, tenant, streamId, options);
  }

  /**
   * The global order, (transaction id, global sequence), read only below the oldest transaction still
   * running: an append that took a lower sequence number but commits later is never passed over.
   */
  async readAll(after: LogCursor, limit = 1000): Promise<ReadPage> {
    const result = await this.pool.query<PgEventRow>(orderedRead(true), [after.txid, after.seq, limit]);
    const events = result.rows.map(tenantEvent);
    return { events, cursor: events[events.length - 1]?.cursor ?? after };
  }

  async committed(tenant: string, commandId: string): Promise<StoredEvent[] | null> {
    const client = await this.pool.connect();
    try {
      const { command } = await readChain(client, tenant, null, commandId, false);
      return command ? await eventsOf(client, tenant, command) : null;
    } finally {
      client.release();
    }
  }

  sequences(tenant: string): Promise<Map<string, number>> {
    return readSequences(this.pool, tenant);
  }

  /** Raises the tenant's id marks to at least these (a team moving here brings its SQLite marks). */
  async importSequences(tenant: string, marks: ReadonlyMap<string, number>): Promise<void> {
    checkTenant(tenant);
    await inTransaction(
      this.pool,
      (client) => raiseSequences(client, tenant, marks),
      beginLocked(this.target.schema, tenant),
    );
  }

  head(tenant: string): Promise<ChainHead> {
    return recordedHead(this.pool, tenant);
  }

  async tenants(): Promise<string[]> {
    const result = await this.pool.query<{ tenant: string }>('SELECT tenant FROM es_chains ORDER BY tenant');
    return result.rows.map((r) => r.tenant);
  }

  async verify(tenant?: string): Promise<Map<string, VerifyResult>> {
    const results = new Map<string, VerifyResult>();
    for (const t of tenant === undefined ? await this.tenants() : [tenant])
      results.set(t, await verifyPgTenant(this.pool, t));
    return results;
  }

  readRows(tenant: string, afterPosition: number, limit: number): Promise<EventRow[]> {
    return readWholeTenantRows(this.pool, tenant, afterPosition, limit);
  }

  async importRows(tenant: string, rows: readonly EventRow[]): Promise<void> {
    checkTenant(tenant);
    const at = this.clock().toISOString();
    await this.readModels.prepare(this.pool, tenant);
    await inTransaction(
      this.pool,
      async (client) => {
        const { head } = await readChain(client, tenant, null, null);
        const events = await importPgRows(client, tenant, head, rows, at);
        await this.readModels.apply(client, events);
      },
      this.begin(tenant),
    );
  }

  unit<R>(tenant: string, options: CommandOptions, unit: () => Unit<R>): Promise<TransactResult<R>> {
    checkTenant(tenant);
    const ctx = {
      pool: this.pool,
      clock: this.clock,
      readModels: this.readModels,
      begin: (t: string) => this.begin(t),
    };
    return runPgUnit(ctx, tenant, options, unit);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

function checkTenant(tenant: string): void {
  if (!tenant || tenant.length > 200 || !tenant.isWellFormed())
    throw invalidInput('tenant must be a non-empty name of at most 200 characters of valid Unicode', { tenant });
}
