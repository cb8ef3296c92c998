import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { sandboxIdentity, type SandboxIdentity } from '../sandbox-user.js';

/**
 * Bubblewrap: whether this host can confine processes, and the mounts of one sandbox.
 * The sandbox's root is an empty tmpfs; only what is listed here exists in it: the system read-only
 * (/usr and its links, an allowlist of /etc with Colony's own passwd and group, /opt), the parts of
 * Colony's code that run (agent runners live there) read-only, the process's directory (read-write, or
 * read-only for a verifier) and its home, a private /tmp and /run, /proc of its own PID namespace. The
 * data directory, other agents' directories and the owner's home are not mounted — where one lies under
 * a mounted tree it is covered by an empty tmpfs. Namespaces: user, PID, IPC, UTS, cgroup and (unless the
 * network is `host`) network; every capability dropped, no new privileges (bubblewrap always sets it),
 * killed with its parent; as root, it runs as an unprivileged uid (sandbox-user.ts).
 */
export type HostSupport =
  { ok: true; bwrap: string; socat: string | null; setpriv: string | null } | { ok: false; reason: string };

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
  let who: SandboxIdentity;
  try {
    who = sandboxIdentity();
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
  const setpriv = who.switched ? which('setpriv') : null;
  if (who.switched && !setpriv)
    return {
      ok: false,
      reason: `Colony runs as root and confined processes run as uid ${who.uid}: setpriv (util-linux) is needed to switch to it`,
    };
  // As root: bubblewrap itself runs as root (no user namespace) and the command drops to the sandbox's uid.
  const test = [
    ...(who.switched ? [] : ['--unshare-user']),
    '--unshare-pid',
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--',
    ...asSandboxUser(setpriv, who),
    '/bin/true',
  ];
  const r = spawnSync(bwrap, test, { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0)
    return {
      ok: false,
      reason: `bwrap cannot create namespaces here (user namespaces disabled?): ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`,
    };
  return { ok: true, bwrap, socat: which('socat'), setpriv };
}

/**
 * The command that drops to the sandbox's uid/gid inside the sandbox, every capability gone for good
 * (nothing when Colony is not root: bubblewrap then runs as Colony's own user in a user namespace).
 */
export function asSandboxUser(setpriv: string | null, who: SandboxIdentity): string[] {
  if (!who.switched || !setpriv) return [];
  return [
    setpriv,
    `--reuid=${who.uid}`,
    `--regid=${who.gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
  ];
}

export function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const path = join(dir, name);
    if (dir && existsSync(path)) return path;
  }
  return null;
}

export const SANDBOX_HOME = '/home/agent';
export const SANDBOX_SOCKETS = '/run/colony';

export const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** /bin, /lib…: a link on merged-/usr systems (recreated as a link), a directory elsewhere (mounted read-only). */
export function systemEntry(path: string): { link: string } | { dir: string } | null {
  if (!existsSync(path)) return null;
  return lstatSync(path).isSymbolicLink() ? { link: readlinkSync(path) } : { dir: path };
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
