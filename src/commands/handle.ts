import type { Database } from 'better-sqlite3';
import { prepared } from '../db.js';
import type { ExpectedVersion } from '../errors.js';
import { appendToStream, checkExpectedVersion, eventsOfCommand } from '../events/store.js';
import type { Event, EventMeta, EventRow, StoredEvent } from '../events/event.js';
import { upcast } from '../events/upcasters.js';
import type { EventBus } from '../events/bus.js';
import { newCommandId, sequenceIds, type TrackedIds } from '../ids.js';
import type { Clock } from '../clock.js';
import type { ProjectionRegistry } from '../projections/registry.js';
import type { Decider } from './decider.js';

/**
 * Command handling: one command, one transaction (rule 1). `transact` opens a BEGIN IMMEDIATE
 * transaction — or joins the one already open, as a savepoint — and everything inside it commits or
 * rolls back together: the appends of every stream it touched, their projections, the ids it took.
 * Stored events are published on the bus only after the outermost commit.
 */
export interface EngineContext {
  readonly db: Database;
  readonly clock: Clock;
  readonly projections: ProjectionRegistry;
  readonly bus: EventBus;
}

export interface CommandOptions {
  /** Idempotency key: a command id that already committed returns its first result and appends nothing. */
  commandId?: string;
  actor: string;
  causationId?: string | null;
  correlationId?: string | null;
}

export interface UnitOfWork {
  readonly meta: EventMeta;
  readonly now: string;
  /** Integer ids for the whole command, e.g. to name a new stream before handling its first command. */
  readonly ids: TrackedIds;
  readonly appended: StoredEvent[];
}

export interface TransactResult<T> {
  /** Every event the command appended (the first run's events when `duplicate`). */
  events: StoredEvent[];
  /** `fn`'s return value; undefined for a duplicate, whose result is its events. */
  value: T | undefined;
  duplicate: boolean;
}

const open = new WeakMap<Database, UnitOfWork>();

export function transact<T>(engine: EngineContext, options: CommandOptions, fn: (uow: UnitOfWork) => T): TransactResult<T> {
  const { db } = engine;
  const outer = open.get(db);
  if (outer) return nested(db, outer, fn);
  const meta: EventMeta = {
    commandId: options.commandId ?? newCommandId(),
    actor: options.actor,
    causationId: options.causationId ?? null,
    correlationId: options.correlationId ?? null,
  };
  const result = db.transaction((): TransactResult<T> => {
    const prior = eventsOfCommand(db, meta.commandId);
    if (prior.length > 0) return { events: prior, value: undefined, duplicate: true };
    const uow: UnitOfWork = { meta, now: engine.clock().toISOString(), ids: sequenceIds(db), appended: [] };
    open.set(db, uow);
    try {
      const value = fn(uow);
      uow.ids.flush();
      const last = uow.appended[uow.appended.length - 1];
      if (last) engine.projections.markApplied(db, last.position);
      return { events: uow.appended, value, duplicate: false };
    } finally {
      open.delete(db);
    }
  }).immediate();
  if (!result.duplicate) engine.bus.publish(result.events);
  return result;
}

function nested<T>(db: Database, uow: UnitOfWork, fn: (uow: UnitOfWork) => T): TransactResult<T> {
  const mark = uow.appended.length;
  try {
    const value = db.transaction(() => fn(uow))();
    return { events: uow.appended.slice(mark), value, duplicate: false };
  } catch (e) {
    uow.appended.length = mark; // the savepoint rolled these back
    throw e;
  }
}

export interface HandleOptions extends CommandOptions {
  /** Checked against the stream's version before deciding; a mismatch is `ErrConcurrency`. */
  expectedVersion?: ExpectedVersion;
}

export interface HandleResult<S, E extends Event> {
  events: StoredEvent<E>[];
  /** State after the command (for a duplicate: after its original events). */
  state: S;
  version: number;
  duplicate: boolean;
}

/**
 * Load the stream, decide, append, project — inside `transact`. Called inside another command's
 * `transact`, it joins that command (its meta and command id win over `options`).
 */
export function handle<S, C, E extends Event>(
  engine: EngineContext,
  decider: Decider<S, C, E>,
  streamId: string,
  command: C,
  options: HandleOptions,
): HandleResult<S, E> {
  const result = transact(engine, options, (uow) => {
    const { state, version } = loadState(engine.db, decider, streamId);
    checkExpectedVersion(streamId, options.expectedVersion ?? 'any', version);
    const decided = decider.decide(command, state, { now: uow.now, actor: uow.meta.actor, ids: uow.ids });
    if (decided.length === 0) return { state, version };
    uow.ids.flush();
    const stored = appendToStream(engine.db, streamId, version === 0 ? 'no_stream' : version, decided, uow.meta, uow.now);
    engine.projections.apply(engine.db, stored);
    uow.appended.push(...stored);
    return { state: stored.reduce((s, e) => decider.evolve(s, e as unknown as E), state), version: version + stored.length };
  });
  if (result.value) return { events: result.events as StoredEvent<E>[], ...result.value, duplicate: false };
  const mine = result.events.filter((e) => e.streamId === streamId) as StoredEvent<E>[];
  const version = mine[mine.length - 1]?.version ?? 0;
  return { events: result.events as StoredEvent<E>[], ...loadState(engine.db, decider, streamId, version), duplicate: true };
}

/** Folds the stream (upcasted) into state, optionally only up to version `to`. */
export function loadState<S, E extends Event>(
  db: Database,
  decider: Decider<S, unknown, E>,
  streamId: string,
  to = Number.MAX_SAFE_INTEGER,
): { state: S; version: number } {
  // Only the columns evolve needs: skipping meta and hashes keeps the hot path cheap.
  const rows = prepared(
    db,
    'SELECT version, type, schema_version, data FROM es_events WHERE stream_id = ? AND version <= ? ORDER BY version',
  ).all(streamId, to) as Pick<EventRow, 'version' | 'type' | 'schema_version' | 'data'>[];
  let state = decider.initialState();
  for (const row of rows) {
    const { data } = upcast(row.type, row.schema_version, JSON.parse(row.data));
    state = decider.evolve(state, { type: row.type, data } as E);
  }
  return { state, version: rows[rows.length - 1]?.version ?? 0 };
}
