import { closeSync, constants, existsSync, fstatSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openFile, PathRefused } from '../beneath.js';
import { adoptTree, sandboxIdentity } from '../sandbox-user.js';
import type { Mounts } from './bwrap-args.js';
import { accountFiles, etcEntries } from './sandbox-etc.js';
import { contains, nodeInstall } from './sandbox.js';

/**
 * What one sandbox mounts, and the descriptors it mounts them through (sandbox.ts). Colony's code is
 * mounted only where it runs (the agent runners and what they import: src, bin, node_modules, examples…)
 * — never the checkout's .git, .env or anything else beside it.
 */

/** Where Colony's code lives: agent runners and their modules are read from there (read-only). */
export const COLONY_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The parts of the checkout a confined process may run (or read, as the doc-gardener reads docs/cli.md). */
export const CODE_ENTRIES = [
  'package.json',
  'tsconfig.json',
  'docs/cli.md',
  'bin',
  'src',
  'dist',
  'node_modules',
  'examples',
  'testkit',
  'test/fixtures',
];

/** The code entries of this install that exist, as real paths. */
export function codeMounts(): string[] {
  const root = realpathSync(COLONY_ROOT);
  const entries = CODE_ENTRIES.map((e) => join(root, e)).filter((p) => existsSync(p));
  const node = nodeInstall();
  return node ? [...entries, realpathSync(node)] : entries;
}

/**
 * Descriptors handed to one sandbox: each path opened once with no symlink on the way; a sandbox sees
 * them as 3, 4, … (the order they were opened in), which is what `--bind-fd` is given.
 */
export class Descriptors {
  private readonly fds: number[] = [];

  /** Opens `path` and answers its number in the child; throws PathRefused (a symlink on the way, missing). */
  open(path: string): number {
    this.fds.push(openFile(path, constants.O_RDONLY | constants.O_NONBLOCK));
    return 2 + this.fds.length;
  }

  get list(): readonly number[] {
    return this.fds;
  }

  close(): void {
    for (const fd of this.fds.splice(0)) closeSync(fd);
  }
}

export interface MountPlan {
  cwd: string;
  /** The working directory is mounted read-write (an agent's run, a recipe that says so) or read-only (a verifier). */
  cwdWritable: boolean;
  home: string | null;
  sockets: string | null;
  dataDir: string;
  shareNetwork: boolean;
  /** A runtime's CLI install directory (adapters/binary.ts), read-only. */
  extraReadOnly?: readonly string[];
}

export function mountsFor(p: MountPlan): Mounts {
  const code = [...codeMounts(), ...(p.extraReadOnly ?? [])].filter((c) => !contains(p.cwd, c));
  return {
    writable: p.cwdWritable ? [p.cwd] : [],
    readOnly: p.cwdWritable ? code : [...code.filter((c) => !contains(c, p.cwd)), p.cwd],
    hidden: [realpathSync(p.dataDir)],
    home: p.home,
    sockets: p.sockets,
    accounts: accountFiles(sandboxIdentity()),
    etc: etcEntries(),
    cwd: p.cwd,
    shareNetwork: p.shareNetwork,
    privileged: sandboxIdentity().switched,
  };
}

/**
 * Makes sure the sandbox's uid may write where a process gets a writable mount: a directory of Colony's
 * own (under the workspace or the homes) is given to it; anywhere else (an owner's checkout registered as
 * a project) Colony changes nothing and answers why the process cannot run there. Null when all is well.
 */
export function writableProblem(dir: string, colonyDirs: readonly string[]): string | null {
  const who = sandboxIdentity();
  if (!who.switched) return null;
  if (colonyDirs.some((root) => contains(root, dir))) {
    adoptTree(dir);
    return null;
  }
  const fd = openFile(dir, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    const writable =
      (st.uid === who.uid && (st.mode & 0o200) !== 0) ||
      (st.gid === who.gid && (st.mode & 0o020) !== 0) ||
      (st.mode & 0o002) !== 0;
    return writable
      ? null
      : `${dir} is not writable by the sandbox's uid ${who.uid} (it belongs to uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)}): give it to that uid (chown -R ${who.uid}:${who.gid} ${dir}) or choose another with COLONY_SANDBOX_UID`;
  } finally {
    closeSync(fd);
  }
}

/** A refusal's words for a path that could not be opened for a mount. */
export function mountRefusal(e: unknown, what: string): string {
  if (!(e instanceof PathRefused)) throw e;
  if (e.reason === 'missing') return `${what} ${e.path} does not exist`;
  if (e.reason === 'symlink') return `${what}: ${e.path} is a symlink now, and nothing is mounted through a symlink`;
  return `${what}: ${e.message}`;
}
