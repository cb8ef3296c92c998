import { realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { isInside, type StaticFile } from '../../commands/webapp-presentation.js';
import { realResolve } from '../projects/paths.js';
import type { ProjectRow } from '../../projections/projects.js';

/** Kind detection is the web app decider's rule (commands/webapp-presentation.ts); re-exported for its callers here. */
export { detectKind } from '../../commands/webapp-presentation.js';

/**
 * Static web apps on disk: where a target resolves when it is presented (a fact for the web app decider,
 * which keeps it inside the project) and how `/apps/<id>/` finds a static app's files again. Every path is
 * resolved with symlinks followed and must lie inside the project's real directory — when presented and
 * again on every request, so a symlink planted later cannot lead out.
 */

/**
 * The project's directory, or null when it is gone or is no longer itself: its path was stored with
 * symlinks resolved, so a directory swapped for a symlink (say, to /) would widen "inside the project".
 */
export function projectRoot(project: ProjectRow): string | null {
  try {
    return realpathSync(project.path) === project.path ? project.path : null;
  } catch {
    return null;
  }
}

const statOf = (path: string): Stats | null => {
  try {
    return statSync(path);
  } catch {
    return null;
  }
};

/** A static target (absolute, or relative to the project directory) as it resolves now, symlinks followed. */
export function inspectStatic(target: string, project: ProjectRow): StaticFile {
  const root = projectRoot(project);
  if (root === null) return { root: null };
  const resolved = realResolve(isAbsolute(target) ? target : join(root, target));
  const stats = statOf(resolved);
  const entry = !stats ? 'missing' : stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'other';
  return { root, resolved, entry };
}

/**
 * The file `/apps/<id>/<segments…>` names, or null (→ 404): the entry page for no segments, else a file
 * under the entry's directory. Segments are already decoded; none may be empty, `.`/`..`, hidden
 * (a leading dot: .git, .env stay private) or hold a separator. A directory serves its index.html.
 */
export function staticFile(project: ProjectRow, target: string, segments: readonly string[]): string | null {
  const root = projectRoot(project);
  if (root === null) return null;
  const entry = realIn(join(root, target), root);
  if (entry === null || segments.length === 0) return entry === null ? null : fileOrIndex(entry, root);
  if (segments.some((s) => s === '' || s.startsWith('.') || /[/\\\0]/.test(s))) return null;
  const real = realIn(join(dirname(entry), ...segments), root);
  return real === null ? null : fileOrIndex(real, root);
}

/** The real path of `path` when it exists inside `root`, else null. */
function realIn(path: string, root: string): string | null {
  try {
    const real = realpathSync(path);
    return isInside(real, root) ? real : null;
  } catch {
    return null;
  }
}

function fileOrIndex(real: string, root: string): string | null {
  const stats = statOf(real);
  if (stats?.isFile()) return real;
  if (!stats?.isDirectory()) return null;
  const index = realIn(join(real, 'index.html'), root);
  return index !== null && statOf(index)?.isFile() ? index : null;
}
