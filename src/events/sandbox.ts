import { invalidInput } from '../errors.js';

/**
 * Confinement of the processes Colony starts (agent runs and command verifiers). A process
 * runs in a Bubblewrap sandbox — its directory read-write, a private HOME and /tmp, the system
 * read-only, the data directory and everything else unmounted, its own PID namespace, no privileges —
 * under limits, with a network the owner chose. What it ran under is recorded with the run.
 */
export type NetworkMode = 'none' | 'allow' | 'host';
export const NETWORK_MODES: readonly NetworkMode[] = ['none', 'allow', 'host'];

/**
 * The limit a process ran into, as far as Colony can tell (RunFinished, TaskVerified). `disk`: its writable
 * directories outgrew their quota, or the data directory's free space fell below the floor while it ran.
 * `budget`: Colony stopped a run whose spend reached its goal's or task's budget, or its agent's daily tokens.
 */
export type LimitKind = 'cpu' | 'memory' | 'pids' | 'file_size' | 'disk' | 'budget';

export interface Limits {
  memoryMb: number;
  cpuSec: number;
  pids: number;
  fileMb: number;
  /** The most its writable directories (working directory and home, together) may hold, in MB. */
  diskMb: number;
}

/** Limits as a profile recorded them: profiles recorded before the disk quota have no `diskMb`. */
export type RecordedLimits = Omit<Limits, 'diskMb'> & { diskMb?: number };

/**
 * How a limit is enforced here: a cgroup (the whole sandbox), an rlimit (each process), measured by Colony
 * while the process runs (`polled`: the disk quota), or not at all (said so).
 */
export type Enforcement = 'cgroup' | 'rlimit' | 'polled' | 'none';

export interface SandboxProfile {
  /** `bwrap`: confined; `off`: the owner opted out (`serve --sandbox off`, or for this agent). */
  mode: 'bwrap' | 'off';
  /** Who opted out, when `mode` is off. */
  optOut?: 'serve' | 'agent';
  network: NetworkMode;
  /** Hosts (host or host:port) the allow-list proxy lets through, when `network` is allow. */
  allowHosts?: string[];
  /** Mounted read-write (the process's directory, its home) and read-only (the system, Colony's code). */
  writable?: string[];
  readOnly?: string[];
  limits: RecordedLimits;
  /** `disk` is absent in profiles recorded before the disk quota. */
  enforcement: { memory: Enforcement; pids: Enforcement; cpu: Enforcement; fileSize: Enforcement; disk?: Enforcement };
}

/**
 * An agent's own confinement settings; null keeps the process-wide default (`colony agents runtime`).
 * Settings recorded before the disk quota have no `diskMb`: read it as null (the default).
 */
export interface SandboxOverrides {
  sandbox: 'on' | 'off' | null;
  network: NetworkMode | null;
  allowHosts: string[] | null;
  memoryMb: number | null;
  cpuSec: number | null;
  pids: number | null;
  fileMb: number | null;
  diskMb: number | null;
}
export const NO_SANDBOX_OVERRIDES: SandboxOverrides = {
  sandbox: null,
  network: null,
  allowHosts: null,
  memoryMb: null,
  cpuSec: null,
  pids: null,
  fileMb: null,
  diskMb: null,
};

/** One line saying how a process was confined, for `colony runs show`, the report's timeline and its runs table. */
export function sandboxLabel(p: SandboxProfile | null): string {
  if (p === null) return 'unconfined (before confinement)';
  if (p.mode === 'off')
    return `UNCONFINED (sandbox off by the ${p.optOut === 'agent' ? "agent's settings" : 'server (serve --sandbox off)'}), network host`;
  const net =
    p.network === 'allow' ? `network allow ${(p.allowHosts ?? []).join(', ') || '(none)'}` : `network ${p.network}`;
  const l = p.limits;
  const how = (e: string) =>
    e === 'cgroup' ? '' : e === 'rlimit' ? ' per process' : e === 'polled' ? ' polled' : ' NOT ENFORCED';
  // A profile recorded before the disk quota says nothing of it.
  const disk = l.diskMb === undefined ? '' : `, disk ${l.diskMb} MB${how(p.enforcement.disk ?? 'none')}`;
  return `bubblewrap, ${net}; memory ${l.memoryMb} MB${how(p.enforcement.memory)}, cpu ${l.cpuSec} s per process, pids ${l.pids}${how(p.enforcement.pids)}, file size ${l.fileMb} MB${disk}`;
}

export function checkLimit(key: keyof Limits, value: number, label: string = key): number {
  if (!Number.isInteger(value) || value < 1)
    throw invalidInput(`${label} must be a whole number ≥ 1, got ${value}`, { field: label });
  return value;
}

const HOST = /^(\*\.)?([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]*[a-z0-9])?(:\d{1,5})?$/;

/** Checks and normalizes network allow-list entries: `host`, `host:port`, `*.domain` (any subdomain), an IPv4 address. */
export function allowList(entries: readonly string[], label = 'allow-list'): string[] {
  return [...new Set(entries.map((e) => e.trim().toLowerCase()).filter(Boolean))].map((e) => {
    const port = Number(/:(\d+)$/.exec(e)?.[1] ?? 443);
    if (!HOST.test(e) || port < 1 || port > 65535)
      throw invalidInput(`${label}: "${e}" is not a host, host:port or *.domain`, { field: label });
    return e;
  });
}
