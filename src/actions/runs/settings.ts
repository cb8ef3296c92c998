import type { Database } from 'better-sqlite3';
import type { RuntimeSettings } from '../../events/runs.js';
import { checkSetting } from '../../commands/runtime.js';
import { runtimeOf } from '../../projections/run-queries.js';

/**
 * An agent's runtime settings: its own (`colony agents update --timeout-sec …`) over the process-wide
 * defaults. Defaults: a run may take 15 min (then SIGTERM, SIGKILL 15 s later); 5 s between two runs of
 * one agent (wake-ups in between merge into one queued run); 100 runs and 20 M tokens a day; a chain of runs woken by
 * each other's messages stops at depth 5. Each default can be set by an environment variable.
 */
export const RUNTIME_DEFAULTS: RuntimeSettings = {
  timeoutSec: 900,
  cooldownSec: 5,
  dailyRunBudget: 100,
  maxTriggerDepth: 5,
  dailyTokenBudget: 20_000_000,
};

const ENV: Record<keyof RuntimeSettings, string> = {
  timeoutSec: 'COLONY_RUN_TIMEOUT_SEC',
  cooldownSec: 'COLONY_RUN_COOLDOWN_SEC',
  dailyRunBudget: 'COLONY_DAILY_RUN_BUDGET',
  maxTriggerDepth: 'COLONY_MAX_TRIGGER_DEPTH',
  dailyTokenBudget: 'COLONY_DAILY_TOKEN_BUDGET',
};

export function defaultSettings(env: NodeJS.ProcessEnv = process.env): RuntimeSettings {
  const out = { ...RUNTIME_DEFAULTS };
  for (const key of Object.keys(ENV) as (keyof RuntimeSettings)[]) {
    const raw = env[ENV[key]];
    if (raw === undefined || raw === '') continue;
    out[key] = checkSetting(key, Number(raw), ENV[key]);
  }
  return out;
}

export function runtimeSettings(db: Database, agentId: number): RuntimeSettings & { stopped: boolean } {
  const r = runtimeOf(db, agentId);
  const d = defaultSettings();
  return {
    timeoutSec: r.timeoutSec ?? d.timeoutSec,
    cooldownSec: r.cooldownSec ?? d.cooldownSec,
    dailyRunBudget: r.dailyRunBudget ?? d.dailyRunBudget,
    maxTriggerDepth: r.maxTriggerDepth ?? d.maxTriggerDepth,
    dailyTokenBudget: r.dailyTokenBudget ?? d.dailyTokenBudget,
    stopped: r.stopped,
  };
}
