import {
  closeSync,
  constants,
  fchownSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  rmdirSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { isAbsolute, normalize, sep } from 'node:path';

/**
 * Paths an agent can write to are hostile: between a check of a path and a use of it, an agent can swap
 * any directory on it for a symlink (renameat2 RENAME_EXCHANGE in a loop wins such races). So Colony never
 * checks a path and then uses it again. It opens it once, one component at a time from `/`, each with
 * O_NOFOLLOW — a component that is a symlink fails the open (ELOOP, or ENOTDIR for a directory) — and
 * then works on the descriptor: fstat, read, write, bind mounts (`/proc/self/fd/N`).
 *
 * Each step opens `/proc/self/fd/<parent>/<name>`: the kernel resolves `/proc/self/fd/<parent>` to the
 * directory the descriptor holds (not to a path that could have changed), then looks `name` up in it —
 * openat(2) with a directory descriptor, which Node does not offer. openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS) does the same walk in one call, but Node cannot make that call either; the walk
 * is what the kernel would do, one step at a time, and refuses exactly the same paths.
 *
 * Every path given here is absolute and already symlink-free where it is trusted (registered paths were
 * stored resolved), so "refuse any symlink on the way" is also "stay beneath the root": without a symlink
 * and without `..`, a walk cannot leave the tree it started in.
 */
export class PathRefused extends Error {
  constructor(
    readonly path: string,
    readonly reason: 'symlink' | 'missing' | 'not_directory' | 'not_regular' | 'bad_path',
    detail: string,
  ) {
    super(detail);
  }
}

const PROC_FD = '/proc/self/fd';
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** The components of an absolute path, refusing `.`/`..` and empty names (a normalized path has none). */
function components(path: string): string[] {
  if (!isAbsolute(path) || path.includes('\0'))
    throw new PathRefused(path, 'bad_path', `not an absolute path: ${path}`);
  const parts = normalize(path).split(sep).filter(Boolean);
  if (parts.some((p) => p === '.' || p === '..')) throw new PathRefused(path, 'bad_path', `${path} has a .. in it`);
  return parts;
}

/** `name` inside the directory held by `dirFd`, as a path the kernel resolves through the descriptor. */
export const at = (dirFd: number, name: string): string => {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0'))
    throw new PathRefused(name, 'bad_path', `not a single file name: ${JSON.stringify(name)}`);
  return `${PROC_FD}/${dirFd}/${name}`;
};

/** A descriptor's path for a child process that inherits it, or for bwrap's `--bind` (see file comment). */
export const fdPath = (fd: number): string => `${PROC_FD}/${fd}`;

/** What a failed open means; `entry` is where the failing name lies (lstat through its parent: never followed). */
function refusal(path: string, e: NodeJS.ErrnoException, entry: string | null): PathRefused {
  if (e.code === 'ENOENT') return new PathRefused(path, 'missing', `${path} does not exist`);
  if (e.code === 'ELOOP' || (e.code === 'ENOTDIR' && entry !== null && isLink(entry)))
    return new PathRefused(path, 'symlink', `${path} is a symlink: paths with a symlink on them are refused`);
  if (e.code === 'ENOTDIR')
    return new PathRefused(path, 'not_directory', `${path} is not a directory (or was swapped while it was opened)`);
  return e as PathRefused;
}

function isLink(entry: string): boolean {
  try {
    return lstatSync(entry).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Opens the directory at `path` with no symlink anywhere on it; the caller closes the descriptor.
 * Throws PathRefused (symlink, missing, not a directory) or the system's error.
 */
export function openDir(path: string): number {
  return walk(path, components(path), components(path).length);
}

/** Opens the first `depth` components of `parts` as directories, no symlinks followed. */
function walk(path: string, parts: readonly string[], depth: number): number {
  let fd = openSync('/', DIR_FLAGS);
  try {
    for (let i = 0; i < depth; i++) {
      let next: number;
      try {
        next = openSync(at(fd, parts[i]!), DIR_FLAGS);
      } catch (e) {
        throw refusal(`/${parts.slice(0, i + 1).join('/')}`, e as NodeJS.ErrnoException, at(fd, parts[i]!));
      }
      closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * Opens the file at `path` with `flags` (O_NOFOLLOW is always added), every directory on the way opened
 * without following a symlink; the caller closes it. `mode` applies when O_CREAT creates it.
 */
export function openFile(path: string, flags: number, mode = 0o600): number {
  const parts = components(path);
  if (parts.length === 0) throw new PathRefused(path, 'bad_path', 'the root is not a file');
  const dir = walk(path, parts, parts.length - 1);
  try {
    return openSync(at(dir, parts[parts.length - 1]!), flags | constants.O_NOFOLLOW, mode);
  } catch (e) {
    throw refusal(path, e as NodeJS.ErrnoException, at(dir, parts[parts.length - 1]!));
  } finally {
    closeSync(dir);
  }
}

/** A regular file's descriptor and stats, opened read-only with no symlink on the way; anything else is refused. */
export function openRegular(path: string): { fd: number; stats: Stats } {
  const fd = openFile(path, constants.O_RDONLY | constants.O_NONBLOCK); // O_NONBLOCK: a FIFO must not hang the open
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new PathRefused(path, 'not_regular', `${path} is not a regular file`);
  }
  return { fd, stats };
}

/** The text of a regular file, or null when it does not exist; a symlink anywhere on the way is refused. */
export function readText(path: string, maxBytes = 16 * 1024 * 1024): string | null {
  let opened: { fd: number; stats: Stats };
  try {
    opened = openRegular(path);
  } catch (e) {
    if (e instanceof PathRefused && e.reason === 'missing') return null;
    throw e;
  }
  try {
    if (opened.stats.size > maxBytes) throw new Error(`${path} is larger than ${maxBytes} bytes`);
    const buf = Buffer.alloc(opened.stats.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(opened.fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString('utf8');
  } finally {
    closeSync(opened.fd);
  }
}

/**
 * Writes `text` to `path`: `create` makes a new file (O_EXCL: nothing, not even a symlink, may be there),
 * else an existing regular file is truncated and rewritten. No symlink on the way is followed.
 */
export function writeText(path: string, text: string, create: boolean, mode = 0o644, owner: Owner = null): void {
  const flags = constants.O_WRONLY | (create ? constants.O_CREAT | constants.O_EXCL : constants.O_TRUNC);
  const fd = openFile(path, flags | constants.O_NONBLOCK, mode);
  try {
    if (!fstatSync(fd).isFile()) throw new PathRefused(path, 'not_regular', `${path} is not a regular file`);
    if (create && owner) fchownSync(fd, owner.uid, owner.gid);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Who a file Colony creates for confined processes belongs to (sandbox-user.ts); null: Colony's own user. */
export type Owner = { uid: number; gid: number } | null;

/**
 * Makes the directory `path` (its parent must exist, no symlink on the way), given to `owner`; false when
 * it already exists as a directory.
 */
export function makeDir(path: string, mode = 0o755, owner: Owner = null): boolean {
  const parts = components(path);
  const parent = walk(path, parts, parts.length - 1);
  try {
    try {
      const name = at(parent, parts[parts.length - 1]!);
      mkdirSync(name, { mode });
      if (owner) {
        const made = openSync(name, DIR_FLAGS);
        try {
          fchownSync(made, owner.uid, owner.gid);
        } finally {
          closeSync(made);
        }
      }
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      closeSync(openSync(at(parent, parts[parts.length - 1]!), DIR_FLAGS)); // there already: a directory, not a symlink
      return false;
    }
  } catch (e) {
    throw e instanceof PathRefused
      ? e
      : refusal(path, e as NodeJS.ErrnoException, at(parent, parts[parts.length - 1]!));
  } finally {
    closeSync(parent);
  }
}

/** Removes the file (or, `dir`, the empty directory) at `path`, its parent reached with no symlink on the way. */
export function remove(path: string, dir = false): void {
  const parts = components(path);
  const parent = walk(path, parts, parts.length - 1);
  try {
    (dir ? rmdirSync : unlinkSync)(at(parent, parts[parts.length - 1]!));
  } finally {
    closeSync(parent);
  }
}

/** True when `path` exists with no symlink on the way (a symlink as the last component counts as not there). */
export function existsNoFollow(path: string): boolean {
  try {
    closeSync(openFile(path, constants.O_RDONLY | constants.O_NONBLOCK));
    return true;
  } catch {
    return false;
  }
}
