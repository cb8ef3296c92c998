import { systemClock, type Clock } from '../clock.js';
import { DomainError, type ExpectedVersion } from '../errors.js';
import type { Decider } from './decider.js';
import type { Event, StoredEvent } from './event.js';
import { checkExpectedVersion } from './store.js';
import type { EventStore } from './store-port.js';

/**
 * A decider's command over the store port, on either store: read the stream, fold, decide, append with
 * the version read as the expected one. Another node appending in between makes the append fail with
 * ErrConcurrency; the command is then decided again on the new state (at most `retries` times), so a
 * rule is always checked against the state it changes. A caller that gave `expectedVersion` wants no
 * retry: its mismatch is the answer.
 *
 * The integer ids a decision takes are counted from the tenant's marks read before deciding and claimed
 * with the append, which fails like a lost race when another command took ids of that kind first.
 * Facts from read models are the caller's to pass in the command, as on the engine's path (engine/handle.ts).
 */
export interface StoreHandleOptions {
  tenant: string;
  actor: string;
  commandId?: string;
  expectedVersion?: ExpectedVersion;
  causationId?: string | null;
  correlationId?: string | null;
  clock?: Clock;
  /** How many times a command is decided again after losing a race (default 5). */
  retries?: number;
}

export interface StoreHandleResult<S, E extends Event> {
  events: StoredEvent<E>[];
  state: S;
  version: number;
  duplicate: boolean;
}

/** Ids for one decision, counted from the marks read before it; what it took is claimed with the append. */
export function decisionIds(marks: ReadonlyMap<string, number>) {
  const claims: Record<string, { from: number; to: number }> = {};
  return {
    claims,
    next(kind: string): number {
      const claim = (claims[kind] ??= { from: marks.get(kind) ?? 0, to: marks.get(kind) ?? 0 });
      claim.to += 1;
      return claim.to;
    },
  };
}

export async function handleOnStore<S, C, E extends Event>(
  store: EventStore,
  decider: Decider<S, C, E>,
  streamId: string,
  command: C,
  options: StoreHandleOptions,
): Promise<StoreHandleResult<S, E>> {
  const retries = options.expectedVersion === undefined ? (options.retries ?? 5) : 0;
  // A retried command is answered from the record before deciding: deciding again would see its own effect.
  const first = options.commandId === undefined ? null : await store.committed(options.tenant, options.commandId);
  if (first) {
    const { state, version } = await fold(store, decider, options.tenant, streamId);
    return { events: first as StoredEvent<E>[], state, version, duplicate: true };
  }
  for (let attempt = 0; ; attempt++) {
    const { state, version } = await fold(store, decider, options.tenant, streamId);
    checkExpectedVersion(streamId, options.expectedVersion ?? 'any', version);
    const now = (options.clock ?? systemClock)().toISOString();
    const ids = decisionIds(await store.sequences(options.tenant));
    const decided = decider.decide(command, state, { now, actor: options.actor, ids });
    try {
      const result = await store.append({
        tenant: options.tenant,
        streamId,
        expected: version === 0 ? 'no_stream' : version,
        events: decided,
        actor: options.actor,
        commandId: options.commandId,
        causationId: options.causationId ?? null,
        correlationId: options.correlationId ?? null,
        sequences: ids.claims,
      });
      const events = result.events as StoredEvent<E>[];
      if (result.duplicate)
        return { events, ...(await fold(store, decider, options.tenant, streamId)), duplicate: true };
      return {
        events,
        state: events.reduce((s, e) => decider.evolve(s, e), state),
        version: version + events.length,
        duplicate: false,
      };
    } catch (e) {
      const lostRace = e instanceof DomainError && e.code === 'ErrConcurrency';
      if (!lostRace || attempt >= retries) throw e;
    }
  }
}

async function fold<S, C, E extends Event>(
  store: EventStore,
  decider: Decider<S, C, E>,
  tenant: string,
  streamId: string,
): Promise<{ state: S; version: number }> {
  const history = (await store.readStream(tenant, streamId)) as StoredEvent<E>[];
  return {
    state: history.reduce((s, e) => decider.evolve(s, e), decider.initialState()),
    version: history[history.length - 1]?.version ?? 0,
  };
}
