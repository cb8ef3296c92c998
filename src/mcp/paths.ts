import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { DomainError, invalidInput } from '../errors.js';

/**
 * Path policy (DESIGN §3.16), applied to every path-like argument of every tool before the call runs.
 * A value is resolved (relative to the server's cwd; symlinks followed along the part that exists) and
 * must lie inside an allowed root: the data dir's workspace, each registered project's path, and the
 * entries of COLONY_ALLOWED_ROOTS. Accepted values are replaced by the resolved absolute path, so the
 * handler acts on exactly what was checked.
 */
const PATH_FIELDS = new Set([
  'path', 'cwd', 'root', 'directory', 'directories', 'file', 'files', 'file_path', 'input_path', 'output_path', 'output_dir',
  'project_path', 'repo_path', 'source_path', 'target_path', 'workspace_path',
]);

export const isPathField = (name: string): boolean =>
  PATH_FIELDS.has(name) || name.endsWith('_path') || name.endsWith('_dir') || name.endsWith('_directory');

export class PathPolicy {
  constructor(private readonly roots: () => readonly string[]) {}

  /** The roots from the data dir and the environment, plus `extra()` (registered projects, later). */
  static forDataDir(dataDir: string, extra: () => readonly string[] = () => [], env = process.env): PathPolicy {
    const workspace = join(dataDir, 'workspace');
    mkdirSync(workspace, { recursive: true, mode: 0o700 });
    const fromEnv = (env.COLONY_ALLOWED_ROOTS ?? '').split(delimiter).filter(Boolean);
    return new PathPolicy(() => [workspace, ...fromEnv, ...extra()]);
  }

  allowedRoots(): string[] {
    return [...new Set(this.roots().map((r) => realResolve(r)))];
  }

  /** Returns the arguments with every path-like value resolved, or throws naming the first bad field. */
  guard(args: Record<string, unknown>, extraFields: readonly string[] = []): Record<string, unknown> {
    let roots: string[] | undefined; // resolved only when a call has a path: most calls have none
    let out = args;
    for (const [field, value] of Object.entries(args)) {
      if (!isPathField(field) && !extraFields.includes(field)) continue;
      if (value === undefined || value === null) continue;
      roots ??= this.allowedRoots();
      const inside = roots;
      if (out === args) out = { ...args };
      out[field] = Array.isArray(value) ? value.map((v, i) => this.check(`${field}[${i}]`, v, inside)) : this.check(field, value, inside);
    }
    return out;
  }

  private check(field: string, value: unknown, roots: readonly string[]): string {
    if (typeof value !== 'string' || value.trim() === '') throw invalidInput(`${field} must be a non-empty string`, { field });
    const resolved = realResolve(value);
    if (!roots.some((root) => inside(resolved, root))) {
      throw new DomainError('ErrPathOutsideRoots', `${field} resolves outside the allowed roots`, { field, allowedRoots: roots });
    }
    return resolved;
  }
}

const inside = (path: string, root: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/** Resolves `p` with symlinks followed as far as it exists; the rest (to be created) is appended as is. */
export function realResolve(p: string): string {
  let head = resolve(p);
  const tail: string[] = [];
  while (!existsSync(head)) {
    const parent = dirname(head);
    if (parent === head) break;
    tail.unshift(basename(head));
    head = parent;
  }
  return join(realpathSync(head), ...tail);
}
