import { DomainError, invalidInput } from '../errors.js';
import type {
  BreakerEvent,
  BreakerKind,
  BreakerOverrides,
  BreakerSettings,
  BreakerTripped,
} from '../events/breakers.js';
import type { Decider } from '../engine/decider.js';

/**
 * An agent's breakers (`breaker-<agentId>`): at most one open per goal (null: outside goals). Tripping an
 * open one writes nothing, so the owner is told once however often a detector fires; only the owner of
 * the agent's tenant resets (the facts arrive in the command: who resets, as a user id). Its thresholds
 * are checked here like the runtime settings: integers ≥ 0, where 0 turns a detector off.
 */
export type TripBreaker = { type: 'TripBreaker'; trip: BreakerTripped['data'] };
/** `goalId` 'all': every open breaker of the agent. `byUserId`: the user who resets, null when it is not a user. */
export type ResetBreakers = {
  type: 'ResetBreakers';
  agentId: number;
  goalId: number | null | 'all';
  byUserId: number | null;
  by: string;
};
export type ConfigureBreakers = {
  type: 'ConfigureBreakers';
  agentId: number;
  ownerId: number;
  changes: Partial<BreakerOverrides>;
  by: string;
};
export type BreakerCommand = TripBreaker | ResetBreakers | ConfigureBreakers;

export interface BreakerState {
  ownerId: number | null;
  /** Open breakers by goal key (`none` or the goal id), each with what tripped it. */
  open: Readonly<Record<string, { goalId: number | null; breaker: BreakerKind }>>;
  settings: BreakerOverrides | null;
}

export const goalKey = (goalId: number | null): string => (goalId === null ? 'none' : String(goalId));

export const NO_BREAKER_OVERRIDES: BreakerOverrides = {
  maxRunsWithoutProgress: null,
  maxRepeatedFailures: null,
  maxWakesPerHour: null,
};

/** A threshold is an integer ≥ 0 (0: the detector is off). */
export function checkThreshold(key: keyof BreakerSettings, value: number, label: string = key): number {
  if (!Number.isSafeInteger(value) || value < 0)
    throw invalidInput(`${label} must be an integer ≥ 0 (0 turns it off), got ${value}`, { field: label });
  return value;
}

export function breakerSettingsAfter(
  current: BreakerOverrides | null,
  changes: Partial<BreakerOverrides>,
): BreakerOverrides {
  const settings = { ...(current ?? NO_BREAKER_OVERRIDES) };
  for (const key of Object.keys(settings) as (keyof BreakerOverrides)[]) {
    const value = changes[key];
    if (value !== undefined) settings[key] = value === null ? null : checkThreshold(key, value);
  }
  return settings;
}

function evolve(state: BreakerState, event: BreakerEvent): BreakerState {
  switch (event.type) {
    case 'BreakerTripped': {
      const { goalId, breaker, ownerId } = event.data;
      return { ...state, ownerId, open: { ...state.open, [goalKey(goalId)]: { goalId, breaker } } };
    }
    case 'BreakerReset': {
      const open = { ...state.open };
      delete open[goalKey(event.data.goalId)];
      return { ...state, open };
    }
    case 'BreakersConfigured':
      return { ...state, ownerId: event.data.ownerId, settings: event.data.settings };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function reset(state: BreakerState, c: ResetBreakers): BreakerEvent[] {
  const open = Object.values(state.open);
  if (open.length === 0) return [];
  if (c.byUserId === null || c.byUserId !== state.ownerId)
    throw new DomainError('ErrNotOwner', `only the owner of agent ${c.agentId} lifts its breakers`, {
      agent_id: c.agentId,
    });
  const lifted = c.goalId === 'all' ? open : open.filter((b) => b.goalId === c.goalId);
  return lifted.map((b) => ({ type: 'BreakerReset', data: { agentId: c.agentId, goalId: b.goalId, by: c.by } }));
}

function decide(command: BreakerCommand, state: BreakerState): BreakerEvent[] {
  switch (command.type) {
    case 'TripBreaker': {
      const t = command.trip;
      if (state.open[goalKey(t.goalId)]) return [];
      if (t.reason.trim() === '') throw invalidInput('a breaker trip needs a reason', { field: 'reason' });
      return [{ type: 'BreakerTripped', data: t }];
    }
    case 'ResetBreakers':
      return reset(state, command);
    case 'ConfigureBreakers': {
      const settings = breakerSettingsAfter(state.settings, command.changes);
      const before = state.settings ?? NO_BREAKER_OVERRIDES;
      const same = (Object.keys(settings) as (keyof BreakerOverrides)[]).every((k) => settings[k] === before[k]);
      const { agentId, ownerId, by } = command;
      return same ? [] : [{ type: 'BreakersConfigured', data: { agentId, ownerId, settings, by } }];
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}

export const breakerDecider: Decider<BreakerState, BreakerCommand, BreakerEvent> = {
  initialState: () => ({ ownerId: null, open: {}, settings: null }),
  evolve,
  decide,
};
