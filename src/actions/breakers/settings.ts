import type { Database } from 'better-sqlite3';
import { checkThreshold } from '../../commands/breakers.js';
import { invalidInput } from '../../errors.js';
import type { BreakerSettings } from '../../events/breakers.js';
import { breakerOverridesOf } from '../../projections/breaker-queries.js';

/**
 * An agent's breaker thresholds: its own (`colony agents breakers NAME --max-runs-without-progress …`) over
 * the process-wide defaults, each settable by an environment variable; 0 turns a detector off. Defaults:
 * 5 runs in a row on a goal that change nothing, 5 failures in a row of the same call the same way, 60
 * wake-ups an hour from probes and task timers. The wake-depth breaker trips at the runtime setting
 * max trigger depth (settings.ts), the dependency-cycle breaker at the first cycle.
 */
export const BREAKER_DEFAULTS: BreakerSettings = {
  maxRunsWithoutProgress: 5,
  maxRepeatedFailures: 5,
  maxWakesPerHour: 60,
};

export const BREAKER_ENV: Record<keyof BreakerSettings, string> = {
  maxRunsWithoutProgress: 'COLONY_MAX_RUNS_WITHOUT_PROGRESS',
  maxRepeatedFailures: 'COLONY_MAX_REPEATED_FAILURES',
  maxWakesPerHour: 'COLONY_MAX_WAKES_PER_HOUR',
};

export function defaultBreakerSettings(env: NodeJS.ProcessEnv = process.env): BreakerSettings {
  const out = { ...BREAKER_DEFAULTS };
  for (const key of Object.keys(BREAKER_ENV) as (keyof BreakerSettings)[]) {
    const raw = env[BREAKER_ENV[key]];
    if (raw === undefined || raw.trim() === '') continue;
    if (!/^\d+$/.test(raw.trim()))
      throw invalidInput(`${BREAKER_ENV[key]} must be an integer ≥ 0 (0 turns it off), not "${raw}"`, {
        field: BREAKER_ENV[key],
      });
    out[key] = checkThreshold(key, Number(raw), BREAKER_ENV[key]);
  }
  return out;
}

export function breakerSettings(db: Database, agentId: number): BreakerSettings {
  const own = breakerOverridesOf(db, agentId);
  const d = defaultBreakerSettings();
  return {
    maxRunsWithoutProgress: own?.maxRunsWithoutProgress ?? d.maxRunsWithoutProgress,
    maxRepeatedFailures: own?.maxRepeatedFailures ?? d.maxRepeatedFailures,
    maxWakesPerHour: own?.maxWakesPerHour ?? d.maxWakesPerHour,
  };
}
