import type { Decider } from './decider.js';
import type { Event, StoredEvent } from './event.js';
import { applySteps, oneStep, type SqlStep } from './projection-sql.js';
import type { Engine } from './engine.js';
import type { CommandOptions, TransactResult } from './handle.js';

/**
 * A command of the domain as one unit on either store: it reads facts from the read models and decides
 * commands on streams, in one transaction that holds the tenant's write lock from its start (SQLite:
 * BEGIN IMMEDIATE on the team's file; PostgreSQL: the tenant's chain lock, pg/unit.ts). Facts read in it
 * are current when its commands append, so rules across streams — a name taken, a budget line — hold
 * under any number of nodes, not just the per-stream version check.
 *
 * Like a projection's apply (engine/projection-sql.ts), a unit is a generator of steps: SQL steps
 * (`yield* get(…)`) and decider steps (`yield* decide(decider, stream, command)`), answered
 * synchronously on SQLite (no await, nothing interleaves inside better-sqlite3's transaction) and
 * with awaited queries on PostgreSQL. A decider's refusal is thrown into the unit at its step, so a unit
 * can catch it and go on (a claim refused for budget still pauses the goal).
 */
export interface DecideStep {
  readonly op: 'decide';
  // The unit holds deciders of any domain side by side; each step's types meet only at runtime.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly decider: Decider<any, any, any>;
  readonly streamId: string;
  readonly command: unknown;
}

/** The next integer id of a kind (channel, message…), taken under the unit's lock, never reused. */
export interface IdStep {
  readonly op: 'id';
  readonly kind: string;
}

export type UnitStep = SqlStep | DecideStep | IdStep;
export type Unit<R> = Generator<UnitStep, R, unknown>;

export interface Decided<S, E extends Event> {
  /** What the command appended (nothing when the decider decided nothing). */
  events: StoredEvent<E>[];
  state: S;
  version: number;
}

/** Decides `command` on the stream's current state and appends what it decided, inside the unit. */
export function* decide<S, C, E extends Event>(
  decider: Decider<S, C, E>,
  streamId: string,
  command: C,
): Generator<UnitStep, Decided<S, E>, unknown> {
  return (yield { op: 'decide', decider, streamId, command }) as Decided<S, E>;
}

export function* nextId(kind: string): Generator<UnitStep, number, unknown> {
  return (yield { op: 'id', kind }) as number;
}

/** Runs a unit on the engine's SQLite store, synchronously, in one transaction (`engine.transact`). */
export function runUnit<R>(engine: Engine, options: CommandOptions, unit: () => Unit<R>): TransactResult<R> {
  return engine.transact(options, (uow) =>
    driveUnit(unit(), (step) => {
      if (step.op === 'id') return uow.ids.next(step.kind);
      if (step.op !== 'decide') return applySteps(engine.db, oneStep(step));
      const handled = engine.handle(step.decider, step.streamId, step.command, options);
      return { events: handled.events, state: handled.state, version: handled.version };
    }),
  );
}

/** Answers a unit's steps one by one; a step that throws is thrown into the unit, where it may be caught. */
export function driveUnit<R>(unit: Unit<R>, answer: (step: UnitStep) => unknown): R {
  let next = unit.next();
  while (!next.done) {
    let value: unknown;
    try {
      value = answer(next.value);
    } catch (e) {
      next = unit.throw(e);
      continue;
    }
    next = unit.next(value);
  }
  return next.value;
}

/** The async twin of driveUnit, for a store that answers with promises. */
export async function driveUnitAsync<R>(unit: Unit<R>, answer: (step: UnitStep) => Promise<unknown>): Promise<R> {
  let next = unit.next();
  while (!next.done) {
    let value: unknown;
    try {
      value = await answer(next.value);
    } catch (e) {
      next = unit.throw(e);
      continue;
    }
    next = unit.next(value);
  }
  return next.value;
}
