import assert from 'node:assert/strict';
import type { DecideContext, Decider } from '../../src/engine/decider.js';
import { DomainError } from '../../src/errors.js';
import type { Event } from '../../src/engine/event.js';
import { memoryIds } from '../../src/engine/ids.js';

/**
 * Given/when/then for deciders, without a database:
 *
 *   spec(cardDecider).given([opened]).when({ type: 'MoveCard', to: 'doing' }).then([moved]);
 *   spec(cardDecider).given([]).when(move).thenThrows('ErrNotFound');
 *   spec(cardDecider).given([opened]).when(sameColumn).thenNothingHappened();
 *   spec(cardDecider).given([opened]).when(withoutItsFacts).thenFailsAsBug(/facts/);
 *
 * `then` compares the whole list of events exactly (type and data), in order.
 */
export interface SpecContext {
  now?: string;
  actor?: string;
  ids?: Readonly<Record<string, number>>;
}

export function spec<S, C, E extends Event>(decider: Decider<S, C, E>) {
  return {
    given(events: readonly E[]) {
      return {
        when(command: C, context: SpecContext = {}) {
          const run = (): readonly E[] => {
            const state = events.reduce((s, e) => decider.evolve(s, e), decider.initialState());
            const ctx: DecideContext = {
              now: context.now ?? '2026-01-01T00:00:00.000Z',
              actor: context.actor ?? 'tester',
              ids: memoryIds(context.ids),
            };
            return decider.decide(command, state, ctx);
          };
          return {
            then(expected: readonly E[]): void {
              assert.deepEqual(run().map(plain), expected.map(plain));
            },
            thenNothingHappened(): void {
              assert.deepEqual(run(), []);
            },
            thenThrows(code: string, messagePart?: string): DomainError {
              let caught: unknown;
              try {
                run();
              } catch (e) {
                caught = e;
              }
              assert.ok(caught instanceof DomainError, `expected a DomainError ${code}, got ${String(caught)}`);
              assert.equal(caught.code, code);
              if (messagePart) assert.match(caught.message, new RegExp(messagePart));
              return caught;
            },
            /** A caller's bug (facts left out), refused as a plain Error: never a DomainError, never events. */
            thenFailsAsBug(message: RegExp): void {
              assert.throws(
                run,
                (e: unknown) => e instanceof Error && !(e instanceof DomainError) && message.test(e.message),
              );
            },
          };
        },
      };
    },
  };
}

const plain = (e: Event): Event => ({ type: e.type, data: e.data });
