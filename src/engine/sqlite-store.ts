import { invalidInput } from '../errors.js';
import { eventsOfCommand, findCommand } from './command-log.js';
import type { Engine } from './engine.js';
import type { CommandOptions, TransactResult } from './handle.js';
import { runUnit, type Unit } from './unit-of-work.js';
import type { EventRow, StoredEvent } from './event.js';
import { appendToStream, readAll, readAllRows, readStream, type ChainHead, type ReadStreamOptions } from './store.js';
import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import { sequenceMarks } from './ids.js';
import {
  checkSequences,
  type AppendRequest,
  type AppendResult,
  type EventStore,
  type LogCursor,
  type ReadPage,
  type SequenceClaims,
} from './store-port.js';
import type { VerifyResult } from './verify.js';

/**
 * The store port on SQLite: one file is one tenant's log, so the global order is the position order
 * (one writer assigns positions inside its write lock: nothing can commit late). Every call runs the
 * engine's synchronous code; the promise only adapts the shape, which is what keeps SQLite's speed.
 */
export class SqliteEventStore implements EventStore {
  readonly dialect = 'sqlite';

  constructor(
    readonly engine: Engine,
    /** The tenant this file holds. */
    readonly tenant = 'default',
    /** Close the engine with the store (false when the caller keeps using the engine). */
    private readonly owns = true,
  ) {}

  append(request: AppendRequest): Promise<AppendResult> {
    return attempt(() => {
      this.own(request.tenant);
      const { db } = this.engine;
      const options = {
        actor: request.actor,
        ...(request.commandId !== undefined && { commandId: request.commandId }),
        causationId: request.causationId ?? null,
        correlationId: request.correlationId ?? null,
      };
      const result = this.engine.transact(options, (uow) => {
        if (request.sequences) claimSequences(db, request.sequences);
        const stored = appendToStream(db, request.streamId, request.expected, request.events, uow.meta, uow.now);
        this.engine.projections.apply(db, stored);
        uow.appended.push(...stored);
      });
      return { events: result.events, duplicate: result.duplicate };
    });
  }

  readStream(tenant: string, streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]> {
    return attempt(() => (this.own(tenant), this.settled(() => readStream(this.engine.db, streamId, options))));
  }

  readAll(after: LogCursor, limit = 1000): Promise<ReadPage> {
    return attempt(() => {
      const events = this.settled(() => readAll(this.engine.db, { after: after.seq, limit })).map((e) => ({
        ...e,
        tenant: this.tenant,
        cursor: { txid: '0', seq: e.position },
      }));
      return { events, cursor: events[events.length - 1]?.cursor ?? after };
    });
  }

  committed(tenant: string, commandId: string): Promise<StoredEvent[] | null> {
    return attempt(() => {
      this.own(tenant);
      return this.settled(() =>
        findCommand(this.engine.db, commandId) ? eventsOfCommand(this.engine.db, commandId) : null,
      );
    });
  }

  sequences(tenant: string): Promise<Map<string, number>> {
    return attempt(() => {
      this.own(tenant);
      return this.settled(() => sequenceMarks(this.engine.db));
    });
  }

  head(tenant: string): Promise<ChainHead> {
    return attempt(() => (this.own(tenant), this.settled(() => this.engine.head())));
  }

  tenants(): Promise<string[]> {
    return Promise.resolve([this.tenant]);
  }

  verify(tenant?: string): Promise<Map<string, VerifyResult>> {
    return attempt(() => {
      if (tenant !== undefined) this.own(tenant);
      return new Map([[this.tenant, this.engine.verify()]]);
    });
  }

  readRows(tenant: string, afterPosition: number, limit: number): Promise<EventRow[]> {
    return attempt(
      () => (this.own(tenant), this.settled(() => readAllRows(this.engine.db, { after: afterPosition, limit }))),
    );
  }

  importRows(tenant: string, rows: readonly EventRow[]): Promise<void> {
    return attempt(() => {
      this.own(tenant);
      this.engine.importRows(rows);
    });
  }

  unit<R>(tenant: string, options: CommandOptions, unit: () => Unit<R>): Promise<TransactResult<R>> {
    return attempt(() => {
      this.own(tenant);
      return runUnit(this.engine, options, unit);
    });
  }

  close(): Promise<void> {
    if (this.owns) this.engine.close();
    return Promise.resolve();
  }

  private own(tenant: string): void {
    if (tenant !== this.tenant)
      throw invalidInput(`this SQLite store holds one tenant, '${this.tenant}', not '${tenant}'`, { tenant });
  }

  /** Reads see what grouped commands have committed (engine/group-commit.ts). */
  private settled<T>(read: () => T): T {
    this.engine.settle();
    return read();
  }
}

/** Inside the command's transaction: the marks the decision read are still there, and move on. */
function claimSequences(db: Database, claims: SequenceClaims): void {
  checkSequences(claims, sequenceMarks(db));
  const upsert = prepared(
    db,
    'INSERT INTO es_sequences (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value',
  );
  for (const [kind, { to }] of Object.entries(claims)) upsert.run(kind, to);
}

/** A synchronous body as a promise: a throw becomes a rejection, as on a store that is really async. */
function attempt<T>(body: () => T): Promise<T> {
  try {
    return Promise.resolve(body());
  } catch (e) {
    return Promise.reject(e as Error);
  }
}
