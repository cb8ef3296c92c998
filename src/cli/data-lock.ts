import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tryFileLock } from '../engine/file-lock.js';

/**
 * The lock of a data directory: whoever holds it runs the data dir's background jobs (the reactor that
 * starts agent runs, command verifiers, the lease sweeper, automatic checkpoints), so nothing runs twice.
 *
 * It is SQLite's own file lock: `colony.lock` held in an open `BEGIN EXCLUSIVE` transaction for as long
 * as the holder wants it. That is a POSIX record lock (fcntl), which the kernel drops when the process
 * ends however it ends (kill -9 included), so a crash never leaves a stale lock; it is not inherited by
 * the agents and verifiers a holder starts (fork/exec), and it needs no dependency beyond the store's.
 * A lock file made with O_EXCL would outlive a crash and need pid and start-time guesses to clear it.
 *
 * A POSIX lock also ends when the holding process closes *any* descriptor of the file: nothing but SQLite
 * may open `colony.lock` in a holder (SQLite itself shares one descriptor among its connections). So who
 * holds it is written beside it, to `colony.lock.json`, for the refusal to name.
 */
export const LOCK_FILE = 'colony.lock';
const HOLDER_FILE = 'colony.lock.json';
/** A `colony serve` that finds a `colony stdio` holding the lock asks it, through this file, to hand over. */
const REQUEST_FILE = 'colony.lock.request';

export type Role = 'serve' | 'stdio';

export interface Holder {
  pid: number;
  role: Role;
  /** The command line it was started with. */
  command: string;
  /** When it took the lock (ISO 8601). */
  since: string;
}

export interface DataLock {
  /** Ends the transaction (the lock goes with it) and removes the holder's note. */
  release(): void;
}

/** Takes the lock if no other process holds it (never waits): null when one does. */
export function tryLock(dataDir: string, role: Role): DataLock | null {
  const lock = tryFileLock(join(dataDir, LOCK_FILE));
  if (!lock) return null;
  const me: Holder = {
    pid: process.pid,
    role,
    command: `colony ${process.argv.slice(2).join(' ')}`.slice(0, 300),
    since: new Date().toISOString(),
  };
  const tmp = join(dataDir, `${HOLDER_FILE}.${process.pid}`);
  writeFileSync(tmp, `${JSON.stringify(me)}\n`, { mode: 0o600 });
  renameSync(tmp, join(dataDir, HOLDER_FILE));
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      if (readHolder(dataDir)?.pid === process.pid) rmSync(join(dataDir, HOLDER_FILE), { force: true });
      lock.release();
    },
  };
}

/** The process that says it holds the lock, if it still runs (a note left by a process that died is no holder). */
export function liveHolder(dataDir: string): Holder | null {
  const h = readHolder(dataDir);
  return h && h.pid !== process.pid && isRunning(h.pid) ? h : null;
}

/** "pid 4242 (colony serve --port 7070, since 2026-…)": who holds the lock, for one line on stderr. */
export function describeHolder(h: Holder | null): string {
  return h ? `pid ${h.pid} (${h.command}, since ${h.since})` : 'another process (it did not say which)';
}

/** A serve asks the stdio holding the lock to hand it over (stdio-jobs.ts watches for this). */
export function requestHandover(dataDir: string): void {
  writeFileSync(join(dataDir, REQUEST_FILE), `${process.pid}\n`, { mode: 0o600 });
}

export function withdrawHandover(dataDir: string): void {
  if (handoverRequester(dataDir) === process.pid) rmSync(join(dataDir, REQUEST_FILE), { force: true });
}

/** The pid of a running process that asked for the lock (a request left by one that died counts for nothing). */
export function handoverRequester(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, REQUEST_FILE), 'utf8').trim());
  } catch {
    return null;
  }
  return Number.isSafeInteger(pid) && pid > 0 && isRunning(pid) ? pid : null;
}

function readHolder(dataDir: string): Holder | null {
  try {
    const h = JSON.parse(readFileSync(join(dataDir, HOLDER_FILE), 'utf8')) as Partial<Holder>;
    if (!Number.isSafeInteger(h.pid) || (h.role !== 'serve' && h.role !== 'stdio')) return null;
    return { pid: h.pid!, role: h.role, command: String(h.command), since: String(h.since) };
  } catch {
    return null;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // it runs, as another user
  }
}
