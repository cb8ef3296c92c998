import type { Limits, NetworkMode, SandboxOverrides } from '../events/sandbox.js';
import { limitDefaults } from './limits.js';
import { defaultAllowHosts } from './network-gate.js';

/** Confinement as configured: the process-wide defaults (environment) under each agent's own settings. */
export type SandboxSwitch = 'on' | 'off';

/** COLONY_SANDBOX: `off` opts out of confinement for every process; anything else (or unset) keeps it on. */
export const sandboxDefault = (env: NodeJS.ProcessEnv = process.env): SandboxSwitch =>
  env.COLONY_SANDBOX === 'off' ? 'off' : 'on';

export const networkDefault = (env: NodeJS.ProcessEnv = process.env): NetworkMode => {
  const v = env.COLONY_NETWORK;
  return v === 'none' || v === 'host' || v === 'allow' ? v : 'allow';
};

/** An agent's confinement as it would run now: its own settings over the process-wide defaults (`colony agents runtime`). */
export function effectiveSandbox(o: SandboxOverrides | null): {
  sandbox: SandboxSwitch;
  network: NetworkMode;
  allowHosts: string[];
  limits: Limits;
} {
  return {
    sandbox: o?.sandbox ?? sandboxDefault(),
    network: o?.network ?? networkDefault(),
    allowHosts: o?.allowHosts ?? defaultAllowHosts(),
    limits: limitsFor(o),
  };
}

export function limitsFor(o: SandboxOverrides | null): Limits {
  const d = limitDefaults();
  return {
    memoryMb: o?.memoryMb ?? d.memoryMb,
    cpuSec: o?.cpuSec ?? d.cpuSec,
    pids: o?.pids ?? d.pids,
    fileMb: o?.fileMb ?? d.fileMb,
    // Settings recorded before the disk quota have no diskMb (undefined): the default.
    diskMb: o?.diskMb ?? d.diskMb,
  };
}
