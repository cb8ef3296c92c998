import { closeSync, constants, fchownSync, fstatSync, openSync, readdirSync } from 'node:fs';
import { at, openDir } from './beneath.js';
import { log } from './log.js';

/**
 * Who a confined process is. Colony running as root would otherwise start every sandbox as uid 0 mapped
 * to the host's root: a root-only file mounted by mistake would be readable, and CLIs that refuse root
 * (Claude Code's permission bypass) behave unlike on a developer's machine. So as root, Colony drops to
 * an unprivileged uid/gid before bubblewrap starts (setpriv), and the sandbox's processes are that uid
 * inside and out: files they create are owned by it, and Colony (root) reads them back.
 *
 * `COLONY_SANDBOX_UID` / `COLONY_SANDBOX_GID` choose it; the default is 65534 (nobody/nogroup), which owns
 * nothing on a usual host. Not as root, the sandbox runs as Colony's own user (it cannot change uid).
 */
export interface SandboxIdentity {
  uid: number;
  gid: number;
  /** True when Colony switches to it (Colony is root); false when it is Colony's own uid. */
  switched: boolean;
}

export const DEFAULT_SANDBOX_ID = 65534;

export function sandboxIdentity(env: NodeJS.ProcessEnv = process.env): SandboxIdentity {
  const self = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  if (self.uid !== 0) return { ...self, switched: false };
  const id = (name: string): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return DEFAULT_SANDBOX_ID;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0 || n > 0xfffffffe)
      throw new Error(`${name} must be a uid/gid above 0 (an unprivileged one), not ${JSON.stringify(raw)}`);
    return n;
  };
  return { uid: id('COLONY_SANDBOX_UID'), gid: id('COLONY_SANDBOX_GID'), switched: true };
}

/** The owner to give a file or directory Colony makes for confined processes; null when nothing needs changing. */
export function sandboxOwner(): { uid: number; gid: number } | null {
  const who = sandboxIdentity();
  return who.switched ? { uid: who.uid, gid: who.gid } : null;
}

/** Gives the open file or directory `fd` to the sandbox's uid (a no-op when Colony is not root). */
export function giveToSandbox(fd: number): void {
  const owner = sandboxOwner();
  if (owner) fchownSync(fd, owner.uid, owner.gid);
}

/**
 * Makes the tree at `dir` the sandbox uid's when its top is not yet: a workspace or home that Colony made
 * before it ran confined processes as that uid. Walked through descriptors, never following a symlink
 * (a symlink itself is left alone), never into another filesystem, and a file with several links is
 * skipped (a hard link could name a file that is not the agent's). Returns how many entries changed.
 */
export function adoptTree(dir: string): number {
  const owner = sandboxOwner();
  if (!owner) return 0;
  const fd = openDir(dir);
  try {
    const top = fstatSync(fd);
    if (top.uid === owner.uid && top.gid === owner.gid) return 0;
    const changed = adopt(fd, top.dev, owner, 0);
    log.info({ dir, changed, uid: owner.uid }, "gave a directory of Colony's to the sandbox uid");
    return changed;
  } finally {
    closeSync(fd);
  }
}

const MAX_DEPTH = 64;

function adopt(fd: number, dev: number, owner: { uid: number; gid: number }, depth: number): number {
  fchownSync(fd, owner.uid, owner.gid);
  let changed = 1;
  if (depth >= MAX_DEPTH) return changed;
  for (const entry of readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true })) {
    if (entry.isSymbolicLink() || !(entry.isDirectory() || entry.isFile())) continue;
    let child: number;
    try {
      const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
      child = openSync(at(fd, entry.name), flags | (entry.isDirectory() ? constants.O_DIRECTORY : 0));
    } catch {
      continue; // gone or swapped meanwhile: not ours to follow
    }
    try {
      const st = fstatSync(child);
      if (st.dev !== dev) continue;
      if (st.isDirectory()) changed += adopt(child, dev, owner, depth + 1);
      else if (st.isFile() && st.nlink === 1) {
        fchownSync(child, owner.uid, owner.gid);
        changed += 1;
      }
    } finally {
      closeSync(child);
    }
  }
  return changed;
}
