import type { Database } from 'better-sqlite3';
import type { Clock } from '../clock.js';
import { DomainError, type ExpectedVersion } from '../errors.js';
import type { EventBus } from './bus.js';
import { assertAnchored } from './anchor.js';
import { commandUnder, eventsOfCommand, findCommand, recordCommand } from './command-log.js';
import type { Event, EventMeta, StoredEvent } from './event.js';
import { appendToStream, checkExpectedVersion } from './store.js';
import { newCommandId, sequenceIds, type TrackedIds } from './ids.js';
import type { ProjectionRegistry } from './projection-registry.js';
import type { Decider } from './decider.js';
import type { GroupCommit } from './group-commit.js';
import type { Replica } from './replica.js';
import { viaPrimary } from './through-primary.js';
import { loadState } from './state.js';
import type { SqlStep } from './projection-sql.js';

/**
 * Command handling: one command, one transaction. `transact` opens a BEGIN IMMEDIATE
 * transaction — or joins the one already open, as a savepoint — and everything inside it commits or
 * rolls back together: the appends of every stream it touched, their projections, the ids it took and
 * the record of the command id. Stored events are published on the bus only after the outermost commit.
 * The outermost one first checks the log's tail against its anchor (ErrChainBroken: engine/anchor.ts).
 * Under group commit (group-commit.ts) the outermost transaction of a grouped caller's command is a
 * savepoint of the batch's transaction instead, and its events are published after the batch's COMMIT.
 */
export interface EngineContext {
  readonly db: Database;
  readonly clock: Clock;
  readonly projections: ProjectionRegistry;
  readonly bus: EventBus;
  /** Group commit (group-commit.ts): absent, every outermost command commits on its own. */
  readonly group?: GroupCommit;
  /** Set when this database is a copy of a primary store that every write goes through (replica.ts). */
  readonly replica?: Replica | null;
}

export interface CommandOptions {
  /**
   * Idempotency key: a command id that already committed returns its first result and appends nothing.
   * Without one the engine generates an id (in the events' meta) that nobody can retry, so it is not recorded.
   */
  commandId?: string;
  /** Record the command id for retries (default: when `commandId` is given). False for ids made up by the caller. */
  record?: boolean;
  /**
   * The idempotency key's scope, a prefix of `commandId`: another command already recorded under it (the
   * same key with other arguments) is ErrIdempotencyConflict, checked inside the transaction.
   */
  idempotencyScope?: string;
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
  /** Its projections' writes held for the end of its batch (projection-sql.ts `later`); null: they run at once. */
  readonly held: SqlStep[] | null;
}

export interface TransactResult<T> {
  /** Every event the command appended (the first run's events when `duplicate`). */
  events: StoredEvent[];
  /** `fn`'s return value; undefined for a duplicate, whose result is its events. */
  value: T | undefined;
  duplicate: boolean;
}

const open = new WeakMap<Database, UnitOfWork>();

// One transaction wrapper per connection: better-sqlite3 builds a new one on every db.transaction() call.
const runners = new WeakMap<Database, <T>(fn: () => T) => T>();
function runner(db: Database): <T>(fn: () => T) => T {
  let run = runners.get(db);
  if (!run) {
    run = db.transaction((fn: () => unknown) => fn()).immediate as <T>(fn: () => T) => T;
    runners.set(db, run);
  }
  return run;
}

export function transact<T>(
  engine: EngineContext,
  options: CommandOptions,
  fn: (uow: UnitOfWork) => T,
): TransactResult<T> {
  const { db } = engine;
  const outer = open.get(db);
  if (outer) return nested(db, outer, fn);
  // A grouped caller's command joins the open batch as a savepoint of its transaction (runner nests).
  const batch = engine.group?.enter() ?? null;
  const keyed = options.commandId !== undefined && options.record !== false;
  const meta: EventMeta = {
    commandId: options.commandId ?? newCommandId(),
    actor: options.actor,
    causationId: options.causationId ?? null,
    correlationId: options.correlationId ?? null,
  };
  // Only a batch holds writes back (a copy recording its writes for its primary runs them at once:
  // ProjectionRegistry.apply).
  const held: SqlStep[] | null = batch ? [] : null;
  const run = (): TransactResult<T> => {
    // Never continue a chain whose tail is not the one the last command left: it would hide the damage.
    // Once per batch: nothing but the batch's own commands can move the tail while it holds the lock.
    if (!batch?.anchored) {
      assertAnchored(db);
      if (batch) batch.anchored = true;
    }
    if (keyed) engine.replica?.bringCommands(options.idempotencyScope ?? meta.commandId);
    if (keyed && findCommand(db, meta.commandId))
      return { events: eventsOfCommand(db, meta.commandId), value: undefined, duplicate: true };
    if (keyed && options.idempotencyScope !== undefined)
      checkIdempotencyScope(db, options.idempotencyScope, meta.commandId);
    const uow: UnitOfWork = { meta, now: engine.clock().toISOString(), ids: sequenceIds(db), appended: [], held };
    open.set(db, uow);
    try {
      const value = fn(uow);
      uow.ids.flush();
      if (keyed) recordCommand(db, meta.commandId, uow.appended, uow.now);
      if (keyed && uow.appended.length === 0) engine.replica?.noteEmpty(meta.commandId, uow.now);
      const first = uow.appended[0];
      if (first)
        engine.projections.markApplied(db, first.position - 1, uow.appended[uow.appended.length - 1]!.position);
      return { events: uow.appended, value, duplicate: false };
    } finally {
      open.delete(db);
    }
  };
  // A failure that made SQLite roll back a whole batch is found by the batch itself (its next join or its flush).
  // A replica's own transaction (no batch) takes the primary's lock first and commits there before here.
  const replica = batch ? null : (engine.replica ?? null);
  const caught: StoredEvent[] = [];
  const result = replica ? viaPrimary(runner(db), replica, caught, run) : runner(db)(run);
  if (caught.length) {
    engine.bus.appended(caught);
    engine.bus.publish(caught);
  }
  // In a batch the events wait for its COMMIT; published now they could announce what a failed COMMIT takes back.
  if (!result.duplicate) {
    engine.bus.appended(result.events);
    if (batch) {
      batch.events.push(...result.events);
      if (held?.length) batch.held.push(...held);
    } else engine.bus.publish(result.events);
  }
  return result;
}

function checkIdempotencyScope(db: Database, scope: string, commandId: string): void {
  const other = commandUnder(db, scope);
  if (other !== null && other !== commandId) {
    throw new DomainError(
      'ErrIdempotencyConflict',
      'this idempotency key was already used with different arguments: use a new key for a different request',
      { scope },
    );
  }
}

/** Inside an open command: a savepoint, so a caught failure undoes only its own part. */
function nested<T>(db: Database, uow: UnitOfWork, fn: (uow: UnitOfWork) => T): TransactResult<T> {
  const appended = uow.appended.length;
  const held = uow.held?.length ?? 0;
  const ids = uow.ids.mark();
  try {
    const value = runner(db)(() => fn(uow));
    return { events: uow.appended.slice(appended), value, duplicate: false };
  } catch (e) {
    uow.appended.length = appended;
    if (uow.held) uow.held.length = held;
    uow.ids.undo(ids);
    throw e;
  }
}

export interface HandleOptions extends CommandOptions {
  /** Checked against the stream's version before deciding; a mismatch is `ErrConcurrency`. */
  expectedVersion?: ExpectedVersion;
}

export interface HandleResult<S, E extends Event> {
  events: StoredEvent<E>[];
  /** State after the command (for a duplicate: after its original events on this stream, else now). */
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
    const stored = appendToStream(
      engine.db,
      streamId,
      version === 0 ? 'no_stream' : version,
      decided,
      uow.meta,
      uow.now,
      version,
    );
    engine.projections.apply(engine.db, stored, uow.held);
    uow.appended.push(...stored);
    return {
      state: stored.reduce((s, e) => decider.evolve(s, e as unknown as E), state),
      version: version + stored.length,
    };
  });
  const events = result.events as StoredEvent<E>[];
  if (result.value) return { events, ...result.value, duplicate: false };
  const mine = events.filter((e) => e.streamId === streamId);
  const upTo = mine[mine.length - 1]?.version;
  return { events, ...loadState(engine.db, decider, streamId, upTo), duplicate: true };
}
