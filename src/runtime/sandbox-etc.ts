import { chmodSync, existsSync, lstatSync, mkdtempSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxIdentity } from '../sandbox-user.js';

/**
 * The sandbox's /etc: an allowlist, not the host's /etc minus a few known secrets. Only what programs need
 * to run — the dynamic linker's cache, name resolution, certificates, time zone, alternatives (Debian's
 * /usr/bin links go through it), a shell's profile — is mounted, read-only; everything else (service
 * configs such as pg_hba.conf, credentials, keys) does not exist inside. `COLONY_SANDBOX_ETC` adds names
 * (comma-separated, relative to /etc) for a runtime that needs more.
 *
 * passwd and group are Colony's own: the sandbox's user is `agent` (its uid, home /home/agent), so tools
 * that look up their user (os.userInfo(), git, ssh) work, and the host's accounts are not listed.
 */
export const ETC_ALLOW = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'ca-certificates.conf',
  'crypto-policies',
  'debian_version',
  'fonts',
  'gai.conf',
  'gitconfig',
  'host.conf',
  'hostname',
  'hosts',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'locale.alias',
  'locale.conf',
  'localtime',
  'lsb-release',
  'magic',
  'mime.types',
  'mtab',
  'networks',
  'nsswitch.conf',
  'os-release',
  'pki/tls/certs',
  'profile',
  'protocols',
  'resolv.conf',
  'services',
  'ssl/certs',
  'ssl/openssl.cnf',
  'terminfo',
  'timezone',
];

/** The allowlist plus `COLONY_SANDBOX_ETC`; a name that climbs out of /etc is refused. */
export function etcAllowList(env: NodeJS.ProcessEnv = process.env): string[] {
  const extra = (env.COLONY_SANDBOX_ETC ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of extra)
    if (name.startsWith('/') || name.split('/').includes('..') || name.split('/').some((p) => p.startsWith('.')))
      throw new Error(`COLONY_SANDBOX_ETC: ${JSON.stringify(name)} is not a name inside /etc`);
  return [...new Set([...ETC_ALLOW, ...extra])];
}

/** An /etc entry of the sandbox: a file or directory mounted read-only, or a symlink made again. */
export type EtcEntry = { source: string; dest: string } | { link: string; dest: string };

/** The allowed /etc entries that exist here: a symlink kept as a link when it leads into /usr or /proc, else its target mounted. */
export function etcEntries(allow: readonly string[] = etcAllowList()): EtcEntry[] {
  const out: EtcEntry[] = [];
  for (const name of allow) {
    const dest = join('/etc', name);
    let stat;
    try {
      stat = lstatSync(dest);
    } catch {
      continue;
    }
    if (!stat.isSymbolicLink()) {
      out.push({ source: dest, dest });
      continue;
    }
    let real: string;
    try {
      real = realpathSync(dest);
    } catch {
      continue; // dangling
    }
    const keepsLink = ['/usr/', '/proc/'].some((root) => real.startsWith(root));
    out.push(keepsLink ? { link: readlinkSync(dest), dest } : { source: real, dest });
  }
  return out;
}

let accounts: { dir: string; uid: number; gid: number } | null = null;

/** A private directory with the sandbox's passwd and group (made once per process and identity). */
export function accountFiles(who: SandboxIdentity): { passwd: string; group: string } {
  if (!accounts || accounts.uid !== who.uid || accounts.gid !== who.gid || !existsSync(accounts.dir)) {
    const dir = mkdtempSync(join(tmpdir(), 'colony-etc-'));
    const root = who.uid === 0 ? [] : ['root:x:0:0:root:/root:/usr/sbin/nologin'];
    writeFileSync(
      join(dir, 'passwd'),
      [...root, `agent:x:${who.uid}:${who.gid}:Colony agent:/home/agent:/bin/sh`, ''].join('\n'),
    );
    writeFileSync(join(dir, 'group'), [...(who.gid === 0 ? [] : ['root:x:0:']), `agent:x:${who.gid}:`, ''].join('\n'));
    for (const f of ['passwd', 'group']) chmodSync(join(dir, f), 0o644);
    accounts = { dir, uid: who.uid, gid: who.gid };
  }
  return { passwd: join(accounts.dir, 'passwd'), group: join(accounts.dir, 'group') };
}
