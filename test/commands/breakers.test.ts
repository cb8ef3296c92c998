import { describe, it } from 'node:test';
import { breakerDecider, type TripBreaker } from '../../src/commands/breakers.js';
import type { BreakerEvent, BreakerTripped } from '../../src/events/breakers.js';
import { spec } from '../helpers/decider-spec.js';

const trip = (goalId: number | null, breaker: BreakerTripped['data']['breaker'] = 'no_progress'): TripBreaker => ({
  type: 'TripBreaker',
  trip: {
    agentId: 3,
    ownerId: 1,
    goalId,
    breaker,
    reason: '5 runs in a row changed nothing',
    evidence: { runIds: [1, 2, 3, 4, 5], threshold: 5 },
    by: 'system',
  },
});
const tripped = (goalId: number | null, breaker: BreakerTripped['data']['breaker'] = 'no_progress'): BreakerEvent => ({
  type: 'BreakerTripped',
  data: trip(goalId, breaker).trip,
});
const reset = (goalId: number | null): BreakerEvent => ({
  type: 'BreakerReset',
  data: { agentId: 3, goalId, by: 'user-1' },
});

describe('breaker decider', () => {
  it('trips a breaker per (agent, goal), once: a second trip of an open one writes nothing', () => {
    spec(breakerDecider)
      .given([])
      .when(trip(7))
      .then([tripped(7)]);
    spec(breakerDecider)
      .given([tripped(7)])
      .when(trip(7, 'wake_rate'))
      .thenNothingHappened();
    spec(breakerDecider)
      .given([tripped(7)])
      .when(trip(null))
      .then([tripped(null)]);
    spec(breakerDecider)
      .given([tripped(7), reset(7)])
      .when(trip(7))
      .then([tripped(7)]);
  });

  it('refuses a trip without a reason', () => {
    const bare = trip(7);
    spec(breakerDecider)
      .given([])
      .when({ ...bare, trip: { ...bare.trip, reason: ' ' } })
      .thenThrows('ErrInvalidInput');
  });

  it('resets one goal or all, only by the owner of the tenant; nothing open is nothing to do', () => {
    const by = { type: 'ResetBreakers' as const, agentId: 3, byUserId: 1, by: 'user-1' };
    spec(breakerDecider)
      .given([tripped(7), tripped(null)])
      .when({ ...by, goalId: 'all' })
      .then([reset(7), reset(null)]);
    spec(breakerDecider)
      .given([tripped(7), tripped(8)])
      .when({ ...by, goalId: 8 })
      .then([reset(8)]);
    spec(breakerDecider)
      .given([tripped(7)])
      .when({ ...by, goalId: 9 })
      .thenNothingHappened();
    spec(breakerDecider)
      .given([])
      .when({ ...by, goalId: 'all' })
      .thenNothingHappened();
    spec(breakerDecider)
      .given([tripped(7)])
      .when({ ...by, goalId: 7, byUserId: 2 })
      .thenThrows('ErrNotOwner');
    spec(breakerDecider)
      .given([tripped(7)])
      .when({ ...by, goalId: 7, byUserId: null })
      .thenThrows('ErrNotOwner');
  });

  it('checks thresholds (integers ≥ 0, 0 turns one off); a change that changes nothing writes nothing', () => {
    const set = { type: 'ConfigureBreakers' as const, agentId: 3, ownerId: 1, by: 'user-1' };
    const settings = { maxRunsWithoutProgress: 0, maxRepeatedFailures: null, maxWakesPerHour: 10 };
    spec(breakerDecider)
      .given([])
      .when({ ...set, changes: { maxRunsWithoutProgress: 0, maxWakesPerHour: 10 } })
      .then([{ type: 'BreakersConfigured', data: { agentId: 3, ownerId: 1, settings, by: 'user-1' } }]);
    spec(breakerDecider)
      .given([{ type: 'BreakersConfigured', data: { agentId: 3, ownerId: 1, settings, by: 'user-1' } }])
      .when({ ...set, changes: { maxWakesPerHour: 10 } })
      .thenNothingHappened();
    spec(breakerDecider)
      .given([])
      .when({ ...set, changes: { maxRepeatedFailures: null } })
      .thenNothingHappened();
    spec(breakerDecider)
      .given([])
      .when({ ...set, changes: { maxRepeatedFailures: -1 } })
      .thenThrows('ErrInvalidInput', 'maxRepeatedFailures');
    spec(breakerDecider)
      .given([])
      .when({ ...set, changes: { maxWakesPerHour: 1.5 } })
      .thenThrows('ErrInvalidInput');
  });
});
