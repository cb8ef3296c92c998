import { invalidInput } from '../errors.js';
import type { RuntimeEvent, RuntimeOverrides, RuntimeSettings } from '../events/runs.js';
import {
  allowList,
  checkLimit,
  NETWORK_MODES,
  NO_SANDBOX_OVERRIDES,
  type SandboxOverrides,
} from '../events/sandbox.js';
import type { Decider } from '../engine/decider.js';

/**
 * An agent's runtime (`runtime-<agentId>`): its own settings over the process-wide defaults (timeout,
 * cooldown, daily run budget, maximum trigger depth), its confinement, its project, and whether it is
 * stopped. A change names only the settings it changes (null: back to the default); each value is
 * checked here, and a change that changes nothing writes nothing.
 */
export type ConfigureRuntime = {
  type: 'ConfigureRuntime';
  agentId: number;
  changes: Partial<RuntimeOverrides>;
  by: string;
};
export type StopAgent = { type: 'StopAgent'; agentId: number; by: string; reason: string };
export type StartAgent = { type: 'StartAgent'; agentId: number; by: string };
export type SetAgentProject = { type: 'SetAgentProject'; agentId: number; projectId: number | null; by: string };
export type ConfigureSandbox = {
  type: 'ConfigureSandbox';
  agentId: number;
  changes: Partial<SandboxOverrides>;
  by: string;
};
export type RuntimeCommand = ConfigureRuntime | StopAgent | StartAgent | SetAgentProject | ConfigureSandbox;
export interface RuntimeState {
  settings: RuntimeOverrides | null;
  stopped: boolean;
  projectId: number | null;
  sandbox: SandboxOverrides | null;
}

const NO_OVERRIDES: RuntimeOverrides = {
  timeoutSec: null,
  cooldownSec: null,
  dailyRunBudget: null,
  maxTriggerDepth: null,
  dailyTokenBudget: null,
};

/** A timeout is at least 1 s; the others at least 0 (a daily budget or a depth of 0 refuses every run). Integers only. */
export function checkSetting(key: keyof RuntimeSettings, value: number, label: string = key): number {
  const min = key === 'timeoutSec' ? 1 : 0;
  if (!Number.isInteger(value) || value < min)
    throw invalidInput(`${label} must be an integer ≥ ${min}, got ${value}`, { field: label });
  return value;
}

function oneOf<T extends string>(value: T | null, allowed: readonly T[], field: string): T | null {
  if (value !== null && !allowed.includes(value))
    throw invalidInput(`${field} must be one of ${allowed.join(', ')}, not "${value}"`, { field });
  return value;
}

/** The agent's settings after `changes`, each checked in order. */
export function runtimeAfter(current: RuntimeOverrides | null, changes: Partial<RuntimeOverrides>): RuntimeOverrides {
  // Settings recorded before a key existed (the daily token budget) read as null for it: the default.
  const settings = { ...NO_OVERRIDES, ...current };
  for (const key of Object.keys(settings) as (keyof RuntimeOverrides)[]) {
    const value = changes[key];
    if (value !== undefined) settings[key] = value === null ? null : checkSetting(key, value);
  }
  return settings;
}

/**
 * The agent's confinement after `changes`: sandbox on | off, network none | allow | host, its allow-list and
 * limits. Settings recorded before a key existed (the disk quota) read as null for it: the default.
 */
export function sandboxAfter(current: SandboxOverrides | null, changes: Partial<SandboxOverrides>): SandboxOverrides {
  const settings: SandboxOverrides = { ...NO_SANDBOX_OVERRIDES, ...current };
  if (changes.sandbox !== undefined) settings.sandbox = oneOf(changes.sandbox, ['on', 'off'], 'sandbox');
  if (changes.network !== undefined) settings.network = oneOf(changes.network, NETWORK_MODES, 'network');
  if (changes.allowHosts !== undefined)
    settings.allowHosts = changes.allowHosts === null ? null : allowList(changes.allowHosts, 'allow-hosts');
  for (const key of ['memoryMb', 'cpuSec', 'pids', 'fileMb', 'diskMb'] as const) {
    const value = changes[key];
    if (value !== undefined) settings[key] = value === null ? null : checkLimit(key, value);
  }
  return settings;
}

function evolve(state: RuntimeState, event: RuntimeEvent): RuntimeState {
  switch (event.type) {
    case 'RuntimeConfigured':
      return { ...state, settings: event.data.settings };
    case 'AgentStopped':
      return { ...state, stopped: true };
    case 'AgentStarted':
      return { ...state, stopped: false };
    case 'AgentProjectSet':
      return { ...state, projectId: event.data.projectId };
    case 'SandboxConfigured':
      return { ...state, sandbox: event.data.settings };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: RuntimeCommand, state: RuntimeState): RuntimeEvent[] {
  const { agentId, by } = command;
  switch (command.type) {
    case 'ConfigureRuntime': {
      const settings = runtimeAfter(state.settings, command.changes);
      const same =
        state.settings !== null &&
        (Object.keys(settings) as (keyof RuntimeOverrides)[]).every((k) => settings[k] === state.settings![k]);
      return same ? [] : [{ type: 'RuntimeConfigured', data: { agentId, settings, by } }];
    }
    case 'StopAgent':
      return state.stopped ? [] : [{ type: 'AgentStopped', data: { agentId, by, reason: command.reason } }];
    case 'StartAgent':
      return state.stopped ? [{ type: 'AgentStarted', data: { agentId, by } }] : [];
    case 'SetAgentProject':
      return state.projectId === command.projectId
        ? []
        : [{ type: 'AgentProjectSet', data: { agentId, projectId: command.projectId, by } }];
    case 'ConfigureSandbox': {
      const settings = sandboxAfter(state.sandbox, command.changes);
      // Compared with the current settings read the same way, so a key they lack is no change by itself.
      const before = state.sandbox === null ? null : sandboxAfter(state.sandbox, {});
      return JSON.stringify(before) === JSON.stringify(settings)
        ? []
        : [{ type: 'SandboxConfigured', data: { agentId, settings, by } }];
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}

export const runtimeDecider: Decider<RuntimeState, RuntimeCommand, RuntimeEvent> = {
  initialState: () => ({ settings: null, stopped: false, projectId: null, sandbox: null }),
  evolve,
  decide,
};
