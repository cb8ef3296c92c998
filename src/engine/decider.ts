import type { Event } from './event.js';
import type { IdAllocator } from './ids.js';

/**
 * A domain's write side: `decide` turns a command and the stream's current state into new events;
 * `evolve` folds events into state. Both are pure — no I/O, no clock, no randomness: the time, new ids and the acting principal
 * arrive in the context, and facts from other streams arrive in the command.
 * `decide` throws a `DomainError` to refuse; returning `[]` means "nothing to do".
 */
export interface DecideContext {
  /** ISO-8601 time of the command, the same for all its events. */
  readonly now: string;
  readonly actor: string;
  readonly ids: IdAllocator;
}

export interface Decider<S, C, E extends Event> {
  /**
   * Deciders of streams that grow long (a channel, an agent, a run) keep snapshots of their state
   * (engine/snapshots.ts) under this name. Bump `version` whenever evolve or the state's shape changes:
   * snapshots of another version are never read.
   */
  readonly snapshot?: { name: string; version: number };
  initialState(): S;
  evolve(state: S, event: E): S;
  decide(command: C, state: S, context: DecideContext): readonly E[];
}
