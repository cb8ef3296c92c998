import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, sep } from 'node:path';
import { contains } from '../sandbox.js';
import { sandboxIdentity } from '../../sandbox-user.js';
import { codeMounts, COLONY_ROOT } from '../confine-mounts.js';
import type { RuntimeNeeds } from './types.js';

/**
 * Where a runtime's CLI is, and what the sandbox must mount to run it. People install these CLIs where
 * their installers put them — `~/.local/bin` (Claude Code's native installer), an npm prefix under
 * $HOME, `~/.opencode/bin` — which a sandbox does not see: Colony looks there too, follows the link to the
 * real file, and mounts read-only only what that file needs — the `node_modules` it lives in (an npm
 * package and its platform binary), else its own directory — never a whole home. Searched in order: the
 * runtime's variable (COLONY_CLAUDE_BIN…), PATH, those install places, this checkout's node_modules/.bin.
 */
export interface ResolvedBinary {
  /** The real file (no symlink) the launch line names. */
  path: string;
  /** Directories to mount read-only into the sandbox; empty when it already sees the file. */
  mounts: string[];
}

export type Resolution = ResolvedBinary | { problem: string };

export function resolveBinary(needs: RuntimeNeeds, env: NodeJS.ProcessEnv = process.env): Resolution {
  const named = env[needs.binaryEnv];
  if (named !== undefined && named !== '') {
    if (!isAbsolute(named)) return { problem: `${needs.binaryEnv} must be an absolute path, not "${named}"` };
    if (!executable(named)) return { problem: `${needs.binaryEnv}=${named} is not an executable file` };
    return mountable(named, needs);
  }
  const found = searchDirs(env)
    .map((d) => join(d, needs.binary))
    .find(executable);
  if (!found)
    return {
      problem: `${needs.binary} was not found on PATH, in ~/.local/bin, an npm prefix or this checkout's node_modules: install it (${needs.install}) or name it with ${needs.binaryEnv}=/path/to/${needs.binary}`,
    };
  return mountable(found, needs);
}

function searchDirs(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME ?? homedir();
  return [
    ...(env.PATH ?? '').split(delimiter).filter((d) => isAbsolute(d)),
    join(home, '.local', 'bin'),
    join(home, '.npm-global', 'bin'),
    join(home, '.opencode', 'bin'),
    join(home, '.bun', 'bin'),
    '/usr/local/bin',
    join(COLONY_ROOT, 'node_modules', '.bin'),
  ];
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** What to mount for the real file, or why it cannot be mounted without exposing too much. */
function mountable(found: string, needs: RuntimeNeeds): Resolution {
  const path = realpathSync(found);
  const visible = ['/usr', ...codeMounts()].some((root) => contains(root, path));
  if (visible) return { path, mounts: [] };
  const dir = installDir(path);
  const home = realpathSync(homedir());
  if (dir === '/' || dir === home || dirname(dir) === '/home' || dir === '/root' || contains(dir, home))
    return {
      problem: `${found} resolves to ${path}, whose install directory ${dir} is a home or the root: Colony will not mount it into a sandbox — move ${needs.binary} into its own directory (e.g. /usr/local/bin or ~/.local/bin) or name it with ${needs.binaryEnv}`,
    };
  const denied = [dir, path].find((p) => !runnableBySandbox(p));
  if (denied)
    return {
      problem: `${denied} cannot be ${denied === path ? 'run' : 'entered'} by the sandbox's uid ${sandboxIdentity().uid} (mode ${(statSync(denied).mode & 0o777).toString(8)}): chmod o+rx ${denied}, or install ${needs.binary} where everyone may run it`,
    };
  return { path, mounts: [dir] };
}

/** Whether the uid confined processes run as may execute the file (or enter the directory) by its mode bits. */
function runnableBySandbox(path: string): boolean {
  const who = sandboxIdentity();
  if (!who.switched) return true;
  const st = statSync(path);
  if (st.uid === who.uid) return (st.mode & 0o100) !== 0;
  if (st.gid === who.gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/** The outermost `node_modules` holding the file (its package and its platform package), else the file's directory. */
function installDir(path: string): string {
  const parts = path.split(sep);
  const i = parts.indexOf('node_modules');
  if (i > 0) return parts.slice(0, i + 1).join(sep) || sep;
  return dirname(path) === path ? sep : dirname(path);
}

export const isResolved = (r: Resolution): r is ResolvedBinary => 'path' in r;
