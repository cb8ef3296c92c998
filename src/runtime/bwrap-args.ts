import { dirname } from 'node:path';
import { contains, SANDBOX_HOME, SANDBOX_SOCKETS, SYSTEM_LINKS, systemEntry } from './sandbox.js';
import type { EtcEntry } from './sandbox-etc.js';
import type { Limits, NetworkMode, SandboxProfile } from '../events/sandbox.js';
import type { RunCgroup } from './cgroups.js';
import { enforcement } from './limits.js';

/**
 * bubblewrap's arguments for one sandbox, from its mounts as host paths. Every path an agent could have
 * written to (the working directory, the home, Colony's code, the sandbox's own passwd) is mounted through a
 * descriptor that `bind` opened with no symlink on the way (`--bind-fd`/`--ro-bind-fd`: bubblewrap checks
 * that what it mounts is that very directory, and closes the descriptor): a directory swapped for a
 * symlink between Colony's look and the mount is refused, never followed.
 *
 * Every directory a mount point needs is made with `--dir` (0755) first: bubblewrap running as root would
 * make them 0700, out of reach of the sandbox's unprivileged user.
 */
export interface Mounts {
  /** Read-write, at the same path inside. */
  writable: string[];
  /** Read-only, at the same path inside (Colony's code, the runtime's own install, a verifier's directory). */
  readOnly: string[];
  /** Hidden wherever they lie under a mounted tree (the data directory). */
  hidden: string[];
  /** Mounted read-write at /home/agent and made HOME; null: an empty private home. */
  home: string | null;
  /** Mounted read-only at /run/colony (the run's sockets to Colony and to the allow-list proxy). */
  sockets: string | null;
  /** The sandbox's own passwd and group (sandbox-etc.ts). */
  accounts: { passwd: string; group: string };
  /** The allowed /etc entries (sandbox-etc.ts). */
  etc: EtcEntry[];
  cwd: string;
  shareNetwork: boolean;
  /** bubblewrap runs as root, without a user namespace (the command drops to the sandbox's uid itself). */
  privileged: boolean;
}

class Args {
  readonly list: string[] = [];
  private readonly made = new Set<string>(['/']);
  private mounted: string[] = [];

  constructor(private readonly bind: (path: string) => number) {}

  push(...args: string[]): void {
    this.list.push(...args);
  }

  /** `--dir` for each directory above `dest` not made yet and not inside a bind mount (never a directory of the host's). */
  private parents(dest: string): void {
    const missing: string[] = [];
    for (let d = dirname(dest); !this.made.has(d); d = dirname(d)) {
      if (this.mounted.some((m) => contains(m, d))) break;
      missing.unshift(d);
      this.made.add(d);
    }
    for (const d of missing) this.list.push('--dir', d);
  }

  mount(flag: string, source: string, dest = source): void {
    this.parents(dest);
    this.list.push(flag, source, dest);
    this.mounted.push(dest);
  }

  fd(flag: '--bind-fd' | '--ro-bind-fd', path: string, dest = path): void {
    this.mount(flag, String(this.bind(path)), dest);
  }

  /** A tmpfs is the sandbox's own: directories may be made inside it. */
  tmpfs(dest: string, perms?: string): void {
    this.parents(dest);
    this.list.push(...(perms ? ['--perms', perms] : []), '--tmpfs', dest);
    this.mounted = this.mounted.filter((m) => !contains(dest, m));
  }

  symlink(target: string, dest: string): void {
    this.parents(dest);
    this.list.push('--symlink', target, dest);
  }
}

/** `bind(path)` opens `path` (no symlink followed) and answers the descriptor's number in the child. */
export function bwrapArgs(m: Mounts, bind: (path: string) => number): string[] {
  const a = new Args(bind);
  a.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!m.privileged) a.push('--unshare-user', '--cap-drop', 'ALL'); // as root, the command drops its capabilities itself
  if (!m.shareNetwork) a.push('--unshare-net');
  a.push('--die-with-parent');
  a.mount('--ro-bind', '/usr');
  for (const path of SYSTEM_LINKS) {
    const entry = systemEntry(path);
    if (entry && 'link' in entry) a.symlink(entry.link, path);
    else if (entry) a.mount('--ro-bind', entry.dir);
  }
  for (const e of m.etc) if ('link' in e) a.symlink(e.link, e.dest);
  for (const e of m.etc) if ('source' in e) a.mount('--ro-bind', e.source, e.dest);
  a.mount('--ro-bind-try', '/opt');
  a.fd('--ro-bind-fd', m.accounts.passwd, '/etc/passwd');
  a.fd('--ro-bind-fd', m.accounts.group, '/etc/group');
  a.push('--proc', '/proc', '--dev', '/dev');
  a.tmpfs('/tmp', '1777');
  a.tmpfs('/run');
  for (const path of m.readOnly) a.fd('--ro-bind-fd', path);
  // An empty tmpfs over a hidden directory that a mounted tree contains; later binds (the run's own directory inside it) still show.
  for (const path of m.hidden) if ([...m.readOnly, '/usr', '/opt'].some((root) => contains(root, path))) a.tmpfs(path);
  for (const path of m.writable) a.fd('--bind-fd', path);
  // A writable tree that contains the data directory (a verifier running at a project's root that holds it) must not show it either.
  for (const hidden of m.hidden) {
    if (!m.writable.some((w) => contains(w, hidden) && !contains(hidden, w))) continue;
    a.tmpfs(hidden);
    for (const path of m.writable) if (contains(hidden, path)) a.fd('--bind-fd', path);
  }
  if (m.home) a.fd('--bind-fd', m.home, SANDBOX_HOME);
  else a.tmpfs(SANDBOX_HOME, '0777'); // private to this sandbox; its user is not root
  if (m.sockets) a.fd('--ro-bind-fd', m.sockets, SANDBOX_SOCKETS);
  // The sandbox's own root (where the mount points were made) read-only too: nothing is written outside the mounts.
  a.push('--remount-ro', '/', '--chdir', m.cwd);
  return a.list;
}

/** The paths a run may write: its writable mounts and its home. */
export const writableOf = (m: Mounts): string[] => [...m.writable, ...(m.home ? [m.home] : [])];

/** What the run's RunStarted says of its confinement: the mounts, the network, the limits and how they hold. */
export function bwrapProfile(
  mounts: Mounts,
  network: NetworkMode,
  allowHosts: string[] | null,
  limits: Limits,
  cgroup: RunCgroup | null,
): SandboxProfile {
  return {
    mode: 'bwrap',
    network,
    ...(allowHosts ? { allowHosts } : {}),
    writable: writableOf(mounts),
    readOnly: mounts.readOnly,
    limits,
    enforcement: enforcement(cgroup),
  };
}
