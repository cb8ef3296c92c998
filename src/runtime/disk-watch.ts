import { spawn } from 'node:child_process';
import { closeSync, statfsSync } from 'node:fs';
import { openDir } from '../beneath.js';
import type { LimitKind } from '../events/sandbox.js';
import { log } from '../log.js';
import type { ProcessControl } from './harness.js';

/**
 * The disk a confined process may fill. No filesystem quota is at hand (the workspace is a plain directory
 * on the host's disk, often the disk that holds colony.db), so Colony measures: every second while the
 * process runs, (1) the free space under the data directory, and (2) what its writable directories (its
 * working directory and home, as mounted) hold, against the agent's disk quota.
 *
 * (2) is `du -s -x -B1` on descriptors opened once, before the process started, without following a
 * symlink (beneath.ts): a walk with lstat that never follows a symlink (fts, race-free with openat) and never
 * crosses into another filesystem, counting allocated blocks (a sparse file counts what it occupies), each
 * hard-linked file once. It runs in a child process, so the event loop never waits on a big tree, and a
 * measurement may take at most a twentieth of the time until the next (a huge tree is measured less often).
 * Over the quota the process is stopped as the timeout stops it (SIGTERM, SIGKILL after the grace).
 *
 * The trade-off of polling: a write burst between two measurements can pass the quota by up to the interval
 * times the write speed (the grace adds to it) before the process is stopped. (1) bounds what that can cost
 * the host: it is checked every second whatever the tree's size, and below the floor the process is killed
 * at once (SIGKILL, no grace) — colony.db keeps its room. No process starts below the floor (`lowSpace`,
 * checked in confine.ts for every process Colony starts).
 */
export const DISK_POLL_MS = 1000;
/** A measurement may take at most 1/BACKOFF of the time until the next. */
const BACKOFF = 20;
/** A tree that cannot be measured in this long cannot be held to a quota: the process is stopped. */
const MEASURE_TIMEOUT_MS = 120_000;
export const MIN_FREE_DEFAULT_MB = 1024;
const MB = 1024 * 1024;
/** MB to a tenth, rounded up for what is used (a use over the quota never reads as equal to it), down for what is free. */
const used = (bytes: number): string => String(Math.ceil((bytes / MB) * 10) / 10);
const free = (bytes: number): string => String(Math.floor(bytes / MB));

/** COLONY_MIN_FREE_MB: the free space (MB) the data directory's filesystem keeps; 0 turns the floor off. */
export function minFreeMb(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.COLONY_MIN_FREE_MB;
  if (raw === undefined || raw.trim() === '') return MIN_FREE_DEFAULT_MB;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`COLONY_MIN_FREE_MB must be a whole number of MB ≥ 0, not ${JSON.stringify(raw)}`);
  return n;
}

/** Free space under `dir` for an unprivileged writer (blocks available × block size), in bytes. */
function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Why nothing may start (or go on running) now: the data directory's free space is below the floor; else null. */
export function lowSpace(dataDir: string, floorMb: number = minFreeMb()): string | null {
  const left = freeBytes(dataDir);
  if (left >= floorMb * MB) return null;
  return `only ${free(left)} MB free under the data directory ${dataDir}, below the floor of ${floorMb} MB (COLONY_MIN_FREE_MB)`;
}

/** One confined process's disk: its writable directories against its quota, and the data directory's floor. */
export class DiskWatch {
  private timer: NodeJS.Timeout | null = null;
  private measuring: ReturnType<typeof spawn> | null = null;
  private nextMeasure = 0;
  private reason: string | null = null;
  private killed = false;
  private watching = false;
  private closed = false;

  private constructor(
    private readonly dirs: readonly { path: string; fd: number }[],
    private readonly quotaMb: number,
    private readonly dataDir: string,
    private readonly floorMb: number,
    private readonly du: string,
  ) {}

  /** Opens each writable directory once, no symlink on the way: what is measured is what is mounted. Throws PathRefused. */
  static open(paths: readonly string[], quota: { diskMb: number; dataDir: string; du: string }): DiskWatch {
    const dirs: { path: string; fd: number }[] = [];
    try {
      for (const path of paths) dirs.push({ path, fd: openDir(path) });
    } catch (e) {
      for (const d of dirs) closeSync(d.fd);
      throw e;
    }
    return new DiskWatch(dirs, quota.diskMb, quota.dataDir, minFreeMb(), quota.du);
  }

  /** `disk` once it stopped the process. */
  hit(): LimitKind | null {
    return this.reason === null ? null : 'disk';
  }

  /**
   * Starts polling; the function returned ends it. The floor is checked at once, the first measurement
   * comes one interval in: a short run never pays for a `du` beside it (on 2 cores that was a third of
   * what confinement adds to a run of `true`), and a directory already over its quota is stopped a second later.
   */
  start(control: ProcessControl): () => void {
    this.watching = true;
    this.nextMeasure = Date.now() + DISK_POLL_MS;
    const tick = () => {
      if (!this.watching) return;
      try {
        this.check(control);
      } catch (err) {
        // A timer's throw would end Colony: a check that fails (the data dir gone at shutdown) is logged, and tried again.
        log.warn({ err }, 'the disk of a confined process could not be checked');
      }
      this.timer = setTimeout(tick, DISK_POLL_MS);
      this.timer.unref();
    };
    tick();
    return () => this.end();
  }

  /** Ends the watch and closes its descriptors (the process's release). */
  close(): void {
    this.end();
    if (this.closed) return;
    this.closed = true;
    for (const d of this.dirs) closeSync(d.fd);
  }

  private end(): void {
    this.watching = false;
    if (this.timer) clearTimeout(this.timer);
    this.measuring?.kill('SIGKILL');
  }

  private check(control: ProcessControl): void {
    if (this.killed) return;
    const low = lowSpace(this.dataDir, this.floorMb);
    if (low) {
      this.killed = true;
      this.reason = `killed: ${low}`;
      control.kill(this.reason);
      return;
    }
    if (this.reason !== null || this.measuring || this.dirs.length === 0 || Date.now() < this.nextMeasure) return;
    this.measure(control);
  }

  private measure(control: ProcessControl): void {
    const started = performance.now();
    // The descriptors become the child's 3, 4, …; `/proc/self/fd/N/.` is the directory held, whatever its path is now.
    const child = spawn(this.du, ['-s', '-x', '-B1', ...this.dirs.map((_, i) => `/proc/self/fd/${3 + i}/.`)], {
      stdio: ['ignore', 'pipe', 'pipe', ...this.dirs.map((d) => d.fd)],
    });
    this.measuring = child;
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4096)));
    let late = false;
    let failed: string | null = null;
    const guard = setTimeout(() => ((late = true), child.kill('SIGKILL')), MEASURE_TIMEOUT_MS);
    guard.unref();
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      this.measuring = null;
      this.nextMeasure = Date.now() + Math.max(DISK_POLL_MS, (performance.now() - started) * BACKOFF);
      if (this.watching)
        this.judge(out, err, late ? `du was not done within ${MEASURE_TIMEOUT_MS / 1000} s` : failed, control);
    };
    child.once('error', (e) => ((failed = `du could not run: ${e.message}`), settle()));
    child.once('close', settle);
  }

  /** du's answer: one `bytes<TAB>path` line per directory, in order. Its complaints name the agent's files: never shown. */
  private judge(out: string, err: string, failed: string | null, control: ProcessControl): void {
    const sizes = out
      .split('\n')
      .filter(Boolean)
      .map((line) => Number(/^(\d+)\t/.exec(line)?.[1] ?? NaN));
    const total = sizes.reduce((a, b) => a + b, 0);
    // Files that vanish during the walk are no error of the workspace's; an unreadable directory or no answer is.
    const unmeasured =
      failed || sizes.length !== this.dirs.length || sizes.some(Number.isNaN)
        ? `its writable directories (${this.where()}) could not be measured (${failed ?? 'du gave no total'})`
        : /Permission denied/.test(err)
          ? `a directory under ${this.where()} cannot be read, so its disk use cannot be measured`
          : null;
    if (unmeasured) this.reason = `stopped: ${unmeasured}; a disk quota that cannot be measured does not hold`;
    else if (total > this.quotaMb * MB)
      this.reason = `stopped: its writable directories hold ${used(total)} MB, over its disk quota of ${this.quotaMb} MB (${this.dirs.map((d, i) => `${d.path} ${used(sizes[i]!)} MB`).join(', ')})`;
    else return;
    log.warn({ reason: this.reason }, 'a confined process ran into its disk limit');
    control.stop(this.reason);
  }

  private where(): string {
    return this.dirs.map((d) => d.path).join(', ');
  }
}
