import type { CommandOptions, TransactResult } from './handle.js';
import type { Unit } from './unit-of-work.js';
import { DomainError, type ExpectedVersion } from '../errors.js';
import type { Event, EventMeta, EventRow, StoredEvent } from './event.js';
import type { ChainHead, ReadStreamOptions } from './store.js';
import type { VerifyResult } from './verify.js';

/**
 * The store port: what the engine needs from a store, the same on SQLite (embedded, one tenant per file)
 * and PostgreSQL (many tenants, many nodes). Async on both, because PostgreSQL is a network away.
 *
 * A tenant is a partition: its own hash chain with its own gap-free positions (what the SQLite log has
 * always been), its own stream ids and idempotency keys. Readers of the whole store follow a global
 * order (`LogCursor`) that never skips an event committed late.
 */
export interface AppendRequest {
  tenant: string;
  streamId: string;
  expected: ExpectedVersion;
  events: readonly Event[];
  actor: string;
  /** An idempotency key: a retry with the same id returns the first result and appends nothing. */
  commandId?: string;
  causationId?: string | null;
  correlationId?: string | null;
  /** The integer ids the decision took (DecideContext.ids), checked and recorded with the events. */
  sequences?: SequenceClaims;
}

/**
 * Id high-water marks a decision used, per kind (`task`, `message`…): each must still be `from` when the
 * append commits — else another command took ids of that kind first (ErrConcurrency: decide again) — and
 * becomes `to`. Ids stay gap-free and are never reused, as on the engine's own path (engine/ids.ts).
 */
export type SequenceClaims = Readonly<Record<string, { from: number; to: number }>>;

export function checkSequences(claims: SequenceClaims, current: ReadonlyMap<string, number>): void {
  for (const [kind, { from }] of Object.entries(claims)) {
    const now = current.get(kind) ?? 0;
    if (now !== from)
      throw new DomainError('ErrConcurrency', `another command took ${kind} ids first (at ${now}, expected ${from})`, {
        kind,
        expected: from,
        actual: now,
      });
  }
}

export interface AppendResult {
  events: StoredEvent[];
  duplicate: boolean;
}

/**
 * A place in the global order. On PostgreSQL: the committing transaction's id (xid8, as text) and the
 * event's global sequence number; on SQLite, where the single writer makes positions commit in order,
 * `txid` is '0' and `seq` the position.
 */
export interface LogCursor {
  txid: string;
  seq: number;
}

export const LOG_START: LogCursor = { txid: '0', seq: 0 };

export type TenantEvent = StoredEvent & { tenant: string; cursor: LogCursor };

export interface ReadPage {
  events: TenantEvent[];
  /** Where the next read continues (the last event's cursor, or the one given when the page is empty). */
  cursor: LogCursor;
}

export interface EventStore {
  readonly dialect: 'sqlite' | 'postgres';
  append(request: AppendRequest): Promise<AppendResult>;
  readStream(tenant: string, streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  /** Events of every tenant after `after` in the global order, only those no earlier commit can still precede. */
  readAll(after: LogCursor, limit?: number): Promise<ReadPage>;
  /** The events a command id committed (none for a command that decided nothing); null when it never committed. */
  committed(tenant: string, commandId: string): Promise<StoredEvent[] | null>;
  /** The tenant's id high-water marks per kind. */
  sequences(tenant: string): Promise<Map<string, number>>;
  /** The tenant's chain head (position 0 and the genesis hash before its first event). */
  head(tenant: string): Promise<ChainHead>;
  tenants(): Promise<string[]>;
  /** Walks the tenant's chain, or every tenant's when none is named. */
  verify(tenant?: string): Promise<Map<string, VerifyResult>>;
  /** The tenant's rows in position order, with their hashes (export, migration). */
  readRows(tenant: string, afterPosition: number, limit: number): Promise<EventRow[]>;
  /** Appends rows exactly as given (a migrated or restored log), checking that each continues the chain. */
  importRows(tenant: string, rows: readonly EventRow[]): Promise<void>;
  /**
   * Runs a unit of work (engine/unit-of-work.ts): facts read and commands decided in one transaction that
   * holds the tenant's write lock from its start. With a command id, a retry answers with the first run's
   * events (and no value).
   */
  unit<R>(tenant: string, options: CommandOptions, unit: () => Unit<R>): Promise<TransactResult<R>>;
  close(): Promise<void>;
}

export function metaOf(request: AppendRequest, commandId: string): EventMeta {
  return {
    commandId,
    actor: request.actor,
    causationId: request.causationId ?? null,
    correlationId: request.correlationId ?? null,
  };
}

/** `postgres://…` or `postgresql://…`: the forms `--store` and COLONY_STORE accept for PostgreSQL. */
export const isPostgresUrl = (store: string): boolean => /^postgres(ql)?:\/\//i.test(store);
