import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';

/**
 * Bubblewrap: whether this host can confine processes, and the mounts of one sandbox.
 * The sandbox's root is an empty tmpfs; only what is listed here exists in it: the system read-only
 * (/usr and its links, /etc minus the files that hold credentials, /opt), Colony's own code read-only
 * (agent runners live there), the process's directory and its home read-write, a private /tmp and /run,
 * /proc of its own PID namespace. The data directory, other agents' directories and the owner's home are
 * not mounted — where one lies under a mounted tree it is covered by an empty tmpfs. Namespaces: user,
 * PID, IPC, UTS, cgroup and (unless the network is `host`) network; every capability dropped, no new
 * privileges (bubblewrap always sets it), killed with its parent.
 */
export type HostSupport = { ok: true; bwrap: string; socat: string | null } | { ok: false; reason: string };

let cached: HostSupport | null = null;

/** Probed once per process: a real `bwrap` run with a user namespace, as every sandbox uses one. */
export function hostSupport(): HostSupport {
  cached ??= probe();
  return cached;
}

/** For tests: forget the probe (it runs again on next use). */
export const hostSupportForTests = {
  reset: (): void => {
    cached = null;
  },
};

function probe(): HostSupport {
  if (process.platform !== 'linux')
    return { ok: false, reason: `confinement needs Linux namespaces; this is ${process.platform}` };
  const bwrap = which('bwrap');
  if (!bwrap) return { ok: false, reason: 'bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)' };
  const r = spawnSync(
    bwrap,
    ['--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', '--proc', '/proc', '--', '/bin/true'],
    { encoding: 'utf8', timeout: 10_000 },
  );
  if (r.status !== 0)
    return {
      ok: false,
      reason: `bwrap cannot create namespaces here (user namespaces disabled?): ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`,
    };
  return { ok: true, bwrap, socat: which('socat') };
}

export function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const path = join(dir, name);
    if (dir && existsSync(path)) return path;
  }
  return null;
}

/** Files of /etc that hold credentials or host keys: masked even though /etc is mounted read-only. */
const ETC_SECRETS = [
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/shadow-',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/ssh',
  '/etc/ssl/private',
  '/etc/security/opasswd',
];
const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

export interface Mounts {
  /** Read-write, at the same path inside. */
  writable: string[];
  /** Read-only, at the same path inside (Colony's code, the runtime's own install). */
  readOnly: string[];
  /** Hidden wherever they lie under a mounted tree (the data directory). */
  hidden: string[];
  /** Mounted read-write at /home/agent and made HOME; null: an empty private home. */
  home: string | null;
  /** Mounted read-only at /run/colony (the run's sockets to Colony and to the allow-list proxy). */
  sockets: string | null;
  cwd: string;
  shareNetwork: boolean;
}

export const SANDBOX_HOME = '/home/agent';
export const SANDBOX_SOCKETS = '/run/colony';

export function bwrapArgs(m: Mounts): string[] {
  const args = [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(m.shareNetwork ? [] : ['--unshare-net']),
    '--die-with-parent',
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/usr',
    '/usr',
  ];
  for (const link of SYSTEM_LINKS) args.push(...systemEntry(link));
  args.push('--ro-bind', '/etc', '/etc', '--ro-bind-try', '/opt', '/opt');
  for (const secret of ETC_SECRETS)
    if (existsSync(secret))
      args.push(...(lstatSync(secret).isDirectory() ? ['--tmpfs', secret] : ['--ro-bind', '/dev/null', secret]));
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--tmpfs', '/run');
  for (const path of m.readOnly) args.push('--ro-bind', path, path);
  // An empty tmpfs over a hidden directory that a mounted tree contains; later binds (the run's own directory inside it) still show.
  for (const path of m.hidden)
    if ([...m.readOnly, '/usr', '/etc', '/opt'].some((root) => contains(root, path))) args.push('--tmpfs', path);
  for (const path of m.writable) args.push('--bind', path, path);
  // A writable tree that contains the data directory (a verifier running at a project's root that holds it) must not show it either.
  for (const hidden of m.hidden) {
    if (!m.writable.some((w) => contains(w, hidden) && !contains(hidden, w))) continue;
    args.push('--tmpfs', hidden);
    for (const path of m.writable) if (contains(hidden, path)) args.push('--bind', path, path);
  }
  args.push(...(m.home ? ['--bind', m.home, SANDBOX_HOME] : ['--tmpfs', SANDBOX_HOME]));
  if (m.sockets) args.push('--ro-bind', m.sockets, SANDBOX_SOCKETS);
  // The sandbox's own root (where the mount points were made) read-only too: nothing is written outside the mounts.
  args.push('--remount-ro', '/', '--chdir', m.cwd);
  return args;
}

/** /bin, /lib…: a link on merged-/usr systems (recreated as a link), a directory elsewhere (mounted read-only). */
function systemEntry(path: string): string[] {
  if (!existsSync(path)) return [];
  const stat = lstatSync(path);
  return stat.isSymbolicLink() ? ['--symlink', readlinkSync(path), path] : ['--ro-bind', path, path];
}

export const contains = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/** Where the running Node lives, when not under /usr (nvm, /opt…): mounted read-only so `node` runs inside. */
export function nodeInstall(): string | null {
  const prefix = dirname(dirname(process.execPath));
  return contains('/usr', prefix) || contains('/opt', prefix) ? null : prefix;
}
