import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { App } from '../../app.js';
import { DomainError, invalidInput } from '../../errors.js';
import { log } from '../../log.js';
import { activeProjectPaths } from '../../projections/projects.js';

/**
 * Path policy, applied to every path-like argument of every tool before the call runs.
 * A value is resolved (relative to the server's cwd; symlinks followed along the part that exists) and
 * must lie inside an allowed root: the data dir's workspace, each registered project's path, and the
 * entries of COLONY_ALLOWED_ROOTS. Accepted values are replaced by the resolved absolute path, so the
 * handler acts on exactly what was checked.
 *
 * Registered roots (projects' paths) were resolved when they were registered and are re-resolved on
 * every use: one that no longer resolves to itself — its directory swapped for a symlink — is not a
 * root any more (it is reported, never trusted), so a symlink cannot carry the roots elsewhere.
 */
const PATH_FIELDS = new Set([
  'path',
  'cwd',
  'root',
  'directory',
  'directories',
  'file',
  'files',
  'file_path',
  'input_path',
  'output_path',
  'output_dir',
  'project_path',
  'repo_path',
  'source_path',
  'target_path',
  'workspace_path',
]);

export const isPathField = (name: string): boolean =>
  PATH_FIELDS.has(name) || name.endsWith('_path') || name.endsWith('_dir') || name.endsWith('_directory');

export class PathPolicy {
  constructor(
    private readonly roots: () => readonly string[],
    private readonly pinned: () => readonly string[] = () => [],
  ) {}

  /** The roots from the data dir and the environment, plus `registered()` (projects' paths, pinned: see above). */
  static forDataDir(dataDir: string, registered: () => readonly string[] = () => [], env = process.env): PathPolicy {
    const workspace = join(dataDir, 'workspace');
    mkdirSync(workspace, { recursive: true, mode: 0o700 });
    const fromEnv = (env.COLONY_ALLOWED_ROOTS ?? '').split(delimiter).filter(Boolean);
    return new PathPolicy(() => [workspace, ...fromEnv], registered);
  }

  allowedRoots(): string[] {
    const pinned = this.pinned().filter((r) => movedTo(r) === null);
    return [...new Set([...this.roots().map((r) => realResolve(r)), ...pinned])];
  }

  /** Registered roots that resolve elsewhere now (swapped for a symlink, or replaced), each with where it points. */
  movedRoots(): { root: string; resolvesTo: string }[] {
    return this.pinned().flatMap((root) => {
      const to = movedTo(root);
      return to === null ? [] : [{ root, resolvesTo: to }];
    });
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
      out[field] = Array.isArray(value)
        ? value.map((v, i) => this.check(`${field}[${i}]`, v, inside))
        : this.check(field, value, inside);
    }
    return out;
  }

  private check(field: string, value: unknown, roots: readonly string[]): string {
    if (typeof value !== 'string' || value.trim() === '')
      throw invalidInput(`${field} must be a non-empty string`, { field });
    const resolved = realResolve(value);
    if (!roots.some((root) => inside(resolved, root))) {
      throw new DomainError('ErrPathOutsideRoots', `${field} resolves outside the allowed roots`, {
        field,
        allowedRoots: roots,
      });
    }
    return resolved;
  }
}

/** Where a registered root resolves now if that is not itself (a missing directory is not moved: it may be created again). */
function movedTo(root: string): string | null {
  const now = realResolve(root);
  if (now === root) return null;
  log.warn({ root, resolvesTo: now }, 'a registered path resolves elsewhere now: it is no longer an allowed root');
  return now;
}

/**
 * The data dir's workspace as a real path (made on first use, 0700): agents' own directories lie under
 * `agents/`, the team's projects by default under `projects/`. Real, so that paths under it can be walked
 * from / without meeting a symlink (beneath.ts) even when the data dir was named through one.
 */
export function workspaceRoot(app: App): string {
  const workspace = join(app.dataDir, 'workspace');
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  return realpathSync(workspace);
}

/** An agent's own working directory when it has no project: `<workspace>/agents/<name>`. */
export const agentWorkspace = (app: App, name: string): string => join(workspaceRoot(app), 'agents', name);

/** The path policy for a Colony: the workspace, COLONY_ALLOWED_ROOTS and every active project's path are its roots. */
export const pathPolicyFor = (app: App): PathPolicy =>
  PathPolicy.forDataDir(app.dataDir, () => activeProjectPaths(app.engine.db));

/** A path registered earlier, re-checked now: it must still resolve to itself and lie inside the allowed roots. */
export function recheckRegistered(policy: PathPolicy, path: string, what: string): string {
  const now = realResolve(path);
  if (now !== path) {
    throw new DomainError(
      'ErrPathMoved',
      `${what} ${path} now resolves to ${now}: a registered path that moves is refused, never trusted`,
      { path, resolvesTo: now },
    );
  }
  if (!policy.allowedRoots().some((root) => inside(now, root))) {
    throw new DomainError('ErrPathOutsideRoots', `${what} ${path} lies outside the allowed roots`, { path });
  }
  return now;
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
