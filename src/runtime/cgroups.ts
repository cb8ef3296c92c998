import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LimitKind, Limits } from '../events/sandbox.js';
import { log } from '../log.js';

/**
 * The cgroups that hold a confined process tree's memory and number of processes (v2, or v1's memory and
 * pids controllers), under `colony/` of the host's hierarchy, one per process tree, named
 * `<label>-<pid of the Colony that made it>`. Used only where Colony may create cgroups (as root, or with a
 * delegated subtree); limits.ts falls back to rlimits elsewhere.
 */

type Flavor = { kind: 'v2'; root: string } | { kind: 'v1'; pids: string; memory: string } | { kind: 'none' };
let flavor: Flavor | null = null;

/** Probed once: can this process make cgroups (as root, or with a delegated subtree)? Then what dead Colonies left is swept. */
function cgroups(): Flavor {
  if (flavor) return flavor;
  flavor = probeCgroups();
  if (flavor.kind === 'v2') sweepStale([flavor.root]);
  if (flavor.kind === 'v1') sweepStale([flavor.pids, flavor.memory]);
  return flavor;
}

/** For tests: forget the probe, so the next cgroup made probes (and sweeps) again. */
export const cgroupsForTests = {
  reset: (): void => {
    flavor = null;
  },
};

/**
 * A cgroup is named `<label>-<pid of the Colony that made it>`; one whose Colony is gone (killed before it
 * could remove it) would stay for good, and so would any process left in it. Each is emptied (its processes
 * killed: a run's processes never outlive the Colony that recorded them) and removed; another live Colony's
 * are left alone, as is anything not named so.
 */
function sweepStale(parents: readonly string[]): void {
  for (const parent of parents) {
    let names: string[];
    try {
      names = readdirSync(parent, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = Number(/-(\d+)$/.exec(name)?.[1] ?? NaN);
      if (!Number.isSafeInteger(pid) || pid <= 0 || alive(pid)) continue;
      RunCgroup.left(join(parent, name)).remove();
      log.info({ cgroup: join(parent, name), pid }, 'removing the cgroup of a Colony that is gone');
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
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

  /** One cgroup directory found on the host (one controller's under v1): enough to empty and remove it. */
  static left(dir: string): RunCgroup {
    return new RunCgroup({ pids: dir, memory: dir }, false);
  }

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
