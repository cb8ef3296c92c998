import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tryFileLock } from '../file-lock.js';
import { openDatabase, userVersion } from '../db.js';
import type { Primary } from '../replica.js';
import { engineMigrations } from '../schema.js';
import { readHead } from '../store.js';
import { pgTarget } from './target.js';

/**
 * Where a node keeps its copy of a PostgreSQL tenant (engine/replica.ts): a SQLite file under the data
 * dir, `copies/<schema>-<sha256(tenant), 16 hex>.db`, so a restart resumes from the copy's head instead
 * of copying the whole tenant again. The name is made of the store's schema (a plain SQL name,
 * pg/connect.ts) and a hash of the tenant: no tenant name can reach outside the directory.
 *
 * The copy is a cache of the store, never ahead of it: it is opened WAL + synchronous=NORMAL (a commit
 * an OS crash loses is brought in again from the store), and on open its head must be a row of the
 * store's chain (`copyProblem`), or it is thrown away and copied again.
 *
 * A copy belongs to one process at a time — its events reach that process's bus as they come in, which
 * a second process writing the same file would bypass. Nodes may share a data dir (the keys), so each
 * takes the first free slot: slot 1 is the name above, slot n `<name>.<n>.db`, each held by an open
 * `BEGIN EXCLUSIVE` on its `.lock` file beside it (as the data dir's lock, cli/data-lock.ts: a POSIX
 * lock the kernel drops however the process ends, kill -9 included). A restarted node takes its slot
 * back, so it resumes its own copy.
 */
export const COPIES_DIR = 'copies';
const MAX_SLOTS = 64;

export interface CopySlot {
  /** The copy's database file. */
  file: string;
  /** Lets another process take the slot (after the copy's database is closed). */
  release(): void;
}

/** The copy's name, without slot or extension. */
export function copyName(url: string, tenant: string): string {
  const hash = createHash('sha256').update(tenant, 'utf8').digest('hex').slice(0, 16);
  return `${pgTarget(url).schema}-${hash}`;
}

/** Takes the first slot of this tenant's copy that no other process holds. */
export function claimCopySlot(dataDir: string, url: string, tenant: string): CopySlot {
  const dir = join(dataDir, COPIES_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = copyName(url, tenant);
  for (let n = 1; n <= MAX_SLOTS; n++) {
    const base = join(dir, n === 1 ? name : `${name}.${n}`);
    const lock = tryFileLock(`${base}.lock`);
    if (lock) return { file: `${base}.db`, release: () => lock.release() };
  }
  throw new Error(`all ${MAX_SLOTS} copies of tenant ${tenant} in ${dir} are held by running processes`);
}

/**
 * Why the copy in `file` cannot be resumed, or null when it can (or there is none yet): its head must
 * be a row of the store's chain — the store's hash at the copy's head position equal to the copy's. A
 * copy ahead of the store, or off its chain (the store restored from a backup, the tenant migrated
 * again, another log), is not the store's; neither is a file that is no database of this Colony's.
 */
export function copyProblem(file: string, primary: Primary): string | null {
  if (!existsSync(file)) return null;
  let head;
  try {
    const db = openDatabase(file, { durability: 'normal' });
    try {
      const newest = Math.max(...engineMigrations.map((m) => m.version));
      if (userVersion(db) > newest) return `it was made by a newer Colony (schema ${userVersion(db)})`;
      if (userVersion(db) === 0) return null;
      head = readHead(db);
    } finally {
      db.close();
    }
  } catch (e) {
    return `it could not be read: ${(e as Error).message}`;
  }
  if (head.position === 0) return null;
  const stored = primary.rows(head.position - 1, 1)[0];
  if (!stored)
    return `it is ahead of the store: its head is position ${head.position}, which the store does not hold (the store lost events or was restored)`;
  if (stored.hash !== head.hash)
    return `it differs from the store at its head, position ${head.position} (the store was restored, or the tenant migrated again)`;
  return null;
}

/** Deletes the copy's database with its WAL: the next open copies the tenant again. */
export function removeCopy(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true });
}
