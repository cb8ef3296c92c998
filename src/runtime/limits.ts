import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkLimit, type Enforcement, type LimitKind, type Limits } from '../events/sandbox.js';
import { log } from '../log.js';

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

type Flavor = { kind: 'v2'; root: string } | { kind: 'v1'; pids: string; memory: string } | { kind: 'none' };
let flavor: Flavor | null = null;

/** Probed once: can this process make cgroups (as root, or with a delegated subtree)? */
function cgroups(): Flavor {
  flavor ??= probeCgroups();
  return flavor;
}

function probeCgroups(): Flavor {
  const tryMake = (dir: string): boolean => {
    try {
      mkdirSync(dir, { recursive: true });
      return true;
    } catch {
      return false;
    }
  };
  const v2 = '/sys/fs/cgroup';
  if (existsSync(join(v2, 'cgroup.controllers'))) {
    const root = join(v2, 'colony');
    try {
      if (tryMake(root)) {
        writeFileSync(join(v2, 'cgroup.subtree_control'), '+memory +pids');
        writeFileSync(join(root, 'cgroup.subtree_control'), '+memory +pids');
        return { kind: 'v2', root };
      }
    } catch {
      /* no delegation: fall through */
    }
  }
  const pids = join(v2, 'pids', 'colony');
  const memory = join(v2, 'memory', 'colony');
  if (
    existsSync(join(v2, 'pids', 'cgroup.procs')) &&
    existsSync(join(v2, 'memory', 'cgroup.procs')) &&
    tryMake(pids) &&
    tryMake(memory)
  ) {
    return { kind: 'v1', pids, memory };
  }
  return { kind: 'none' };
}

/** One process tree's cgroup(s), made before it starts and removed (every process in it killed) after. */
export class RunCgroup {
  private constructor(
    private readonly dirs: { pids: string; memory: string },
    private readonly v2: boolean,
  ) {}

  static create(label: string, limits: Limits): RunCgroup | null {
    const f = cgroups();
    if (f.kind === 'none') return null;
    try {
      if (f.kind === 'v2') {
        const dir = join(f.root, label);
        mkdirSync(dir);
        writeFileSync(join(dir, 'pids.max'), String(limits.pids));
        writeFileSync(join(dir, 'memory.max'), String(limits.memoryMb * 1024 * 1024));
        if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
        return new RunCgroup({ pids: dir, memory: dir }, true);
      }
      const pids = join(f.pids, label);
      const memory = join(f.memory, label);
      mkdirSync(pids);
      mkdirSync(memory);
      writeFileSync(join(pids, 'pids.max'), String(limits.pids));
      writeFileSync(join(memory, 'memory.limit_in_bytes'), String(limits.memoryMb * 1024 * 1024));
      if (existsSync(join(memory, 'memory.memsw.limit_in_bytes')))
        writeFileSync(join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryMb * 1024 * 1024));
      return new RunCgroup({ pids, memory }, false);
    } catch (err) {
      log.warn({ err, label }, "could not make the run's cgroup: limits fall back to rlimits");
      return null;
    }
  }

  /** A shell prefix that moves the shell into the cgroup(s) before it execs the rest. */
  enter(): string {
    const files = [...new Set([this.dirs.pids, this.dirs.memory])].map((d) => `'${join(d, 'cgroup.procs')}'`);
    return files.map((f) => `echo $$ > ${f}`).join(' && ');
  }

  /** Which of its limits the tree ran into, if any. */
  hit(): LimitKind | null {
    const read = (file: string): string => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return '';
      }
    };
    if (Number(/^max (\d+)/m.exec(read(join(this.dirs.pids, 'pids.events')))?.[1] ?? 0) > 0) return 'pids';
    const mem = this.v2
      ? read(join(this.dirs.memory, 'memory.events'))
      : read(join(this.dirs.memory, 'memory.oom_control'));
    if (
      Number(/^oom_kill (\d+)/m.exec(mem)?.[1] ?? 0) > 0 ||
      (this.v2 && Number(/^max (\d+)/m.exec(mem)?.[1] ?? 0) > 0)
    )
      return 'memory';
    if (
      !this.v2 &&
      Number(read(join(this.dirs.memory, 'memory.failcnt')).trim() || 0) > 0 &&
      Number(/^under_oom (\d+)/m.exec(mem)?.[1] ?? 0) > 0
    )
      return 'memory';
    return null;
  }

  /** Kills every process still in it (one that left its process group included), then removes it — retrying, off the event loop, while the kernel reaps them. */
  remove(attempt = 0): void {
    let left = false;
    for (const dir of new Set([this.dirs.pids, this.dirs.memory])) {
      if (!existsSync(dir)) continue;
      try {
        for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            /* gone */
          }
        }
        rmdirSync(dir);
      } catch {
        left = true;
      }
    }
    if (left && attempt < 100) setTimeout(() => this.remove(attempt + 1), 20).unref();
    else if (left) log.warn({ dirs: this.dirs }, "a run's cgroup could not be removed");
  }
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
