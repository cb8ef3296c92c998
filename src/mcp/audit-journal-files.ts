import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tryFileLock, type FileLock } from '../engine/file-lock.js';
import { log } from '../log.js';

/**
 * The files of the audit journal's segments (audit-journal.ts): `<name>.jsonl`, the rows, and
 * `<name>.lock`, held by the owning process. Names are `<pid>-<12 hex>`; a name read back from audit.db
 * that is not one is never joined into a path.
 */
export const SEGMENT_NAME = /^[1-9][0-9]{0,9}-[0-9a-f]{12}$/;
/** A backlog is read in chunks this large (grown for a longer line), so a big journal is not read whole. */
const CHUNK = 4 << 20;

export const FLAGS_APPEND =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Hands each complete line of `<dir>/<segment>.jsonl` past byte `from` to `onLine` and returns the
 * offset after the last one: a partial last line (a writer still writing it, or one cut short) waits.
 */
export function readCompleteLines(dir: string, segment: string, from: number, onLine: (line: string) => void): number {
  let fd: number;
  try {
    fd = openSync(join(dir, `${segment}.jsonl`), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return from; // registered, not yet created
    throw e;
  }
  let at = from;
  try {
    const size = fstatSync(fd).size;
    for (let want = CHUNK; at < size;) {
      const buf = Buffer.allocUnsafe(Math.min(want, size - at));
      const n = readSync(fd, buf, 0, buf.length, at);
      const end = buf.subarray(0, n).lastIndexOf(10);
      if (end < 0) {
        if (at + n >= size) break; // the partial last line
        want *= 2; // one line longer than the chunk: read it whole
        continue;
      }
      for (const line of buf.subarray(0, end).toString('utf8').split('\n')) onLine(line);
      at += end + 1;
      want = CHUNK;
    }
  } finally {
    closeSync(fd);
  }
  return at;
}

/** A retired segment's files, then its lock; never throws (a file left behind is swept at the next open). */
export function removeSegmentFiles(dir: string, name: string, fd: number | null, lock: FileLock | null): void {
  try {
    if (fd !== null) closeSync(fd);
  } catch (err) {
    log.warn({ err, segment: name }, 'audit journal segment not closed');
  }
  for (const f of [`${name}.jsonl`, `${name}.lock`]) {
    try {
      unlinkSync(join(dir, f));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        log.warn({ err: e, file: f }, 'audit journal file not removed');
    }
  }
  lock?.release();
}

/**
 * Files of segments that have no row left in audit.db — a mover died between its COMMIT and removing
 * them, or an owner between taking its lock and registering — removed once their lock is free. Called
 * with the rows read in the same transaction, so no segment is registered or retired meanwhile. A lock
 * file alone is left for a minute: its owner may be between creating it and locking it.
 */
export function sweepOrphans(dir: string, registered: ReadonlySet<string>, now = Date.now()): void {
  const files = readdirSync(dir);
  const segments = new Set(files.flatMap((f) => /^(.*)\.(jsonl|lock)$/.exec(f)?.[1] ?? []));
  for (const name of segments) {
    if (!SEGMENT_NAME.test(name) || registered.has(name)) continue;
    if (!files.includes(`${name}.jsonl`) && now - lockChangedAt(dir, name) < 60_000) continue;
    const lock = tryFileLock(join(dir, `${name}.lock`));
    if (lock) removeSegmentFiles(dir, name, null, lock);
  }
}

/** When the segment's lock file was last changed (ms since the epoch; 0 when it is gone). */
function lockChangedAt(dir: string, name: string): number {
  try {
    return statSync(join(dir, `${name}.lock`)).mtimeMs;
  } catch {
    return 0;
  }
}
