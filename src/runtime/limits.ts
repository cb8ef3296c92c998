import { checkLimit, type Enforcement, type LimitKind, type Limits } from '../events/sandbox.js';
import type { RunCgroup } from './cgroups.js';

/**
 * Limits of one confined process tree. Memory and the number of processes are a cgroup's (v2, or v1's
 * memory and pids controllers) when Colony may create cgroups — they then hold for the whole sandbox and
 * say afterwards whether they were hit; otherwise rlimits per process (RLIMIT_DATA, RLIMIT_NPROC — which
 * counts every process of the sandbox's uid on the host, so concurrent sandboxes share it; a confined process
 * never runs as root, which RLIMIT_NPROC would not bind). CPU time and file size are rlimits per process
 * (SIGXCPU, SIGXFSZ tell them apart). The disk quota of its writable directories is measured by Colony
 * while it runs (disk-watch.ts): 10 GiB by default, room for a repository, its dependencies and builds.
 */
export const LIMIT_DEFAULTS: Limits = { memoryMb: 2048, cpuSec: 900, pids: 512, fileMb: 1024, diskMb: 10240 };
const ENV: Record<keyof Limits, string> = {
  memoryMb: 'COLONY_RUN_MEMORY_MB',
  cpuSec: 'COLONY_RUN_CPU_SEC',
  pids: 'COLONY_RUN_PIDS',
  fileMb: 'COLONY_RUN_FILE_MB',
  diskMb: 'COLONY_RUN_DISK_MB',
};

export function limitDefaults(env: NodeJS.ProcessEnv = process.env): Limits {
  const out = { ...LIMIT_DEFAULTS };
  for (const key of Object.keys(ENV) as (keyof Limits)[]) {
    const raw = env[ENV[key]];
    if (raw !== undefined && raw !== '') out[key] = checkLimit(key, Number(raw), ENV[key]);
  }
  return out;
}

/** How each limit is enforced with (or without) a cgroup, for the profile; the disk quota is always polled (disk-watch.ts). */
export function enforcement(cgroup: RunCgroup | null): {
  memory: Enforcement;
  pids: Enforcement;
  cpu: Enforcement;
  fileSize: Enforcement;
  disk: Enforcement;
} {
  // RLIMIT_NPROC binds: a confined process never runs as root (sandbox-user.ts). It counts every process of its uid.
  return {
    memory: cgroup ? 'cgroup' : 'rlimit',
    pids: cgroup ? 'cgroup' : 'rlimit',
    cpu: 'rlimit',
    fileSize: 'rlimit',
    disk: 'polled',
  };
}

/** prlimit's arguments: CPU soft limit (SIGXCPU) a second under the hard one (SIGKILL), file size; memory and processes when no cgroup holds them. */
export function prlimitArgs(l: Limits, cgroup: RunCgroup | null): string[] {
  const mb = (n: number) => String(n * 1024 * 1024);
  return [
    `--cpu=${l.cpuSec}:${l.cpuSec + 1}`,
    `--fsize=${mb(l.fileMb)}`,
    ...(cgroup ? [] : [`--data=${mb(l.memoryMb)}`, `--nproc=${l.pids}`]),
  ];
}

/** The limit a finished process ran into: its signal for CPU and file size, the cgroup for memory and processes, else its own words. */
export function limitHit(
  result: { signal: string | null; exitCode: number | null; tail: string },
  cgroup: RunCgroup | null,
): LimitKind | null {
  // bubblewrap (or the shell) passes a signal death on as the exit status 128 + signal number.
  if (result.signal === 'SIGXCPU' || result.exitCode === 128 + 24) return 'cpu';
  if (result.signal === 'SIGXFSZ' || result.exitCode === 128 + 25) return 'file_size';
  const fromGroup = cgroup?.hit() ?? null;
  if (fromGroup) return fromGroup;
  if (cgroup) return null;
  // Without a cgroup only the process's own complaint tells (an rlimit makes allocation or fork fail, not a signal).
  if (/Cannot allocate memory|out of memory|allocation failed|bad_alloc|MemoryError/i.test(result.tail))
    return 'memory';
  if (/Resource temporarily unavailable|Cannot fork|fork: retry/i.test(result.tail)) return 'pids';
  return null;
}
