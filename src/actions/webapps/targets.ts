import { closeSync, constants, fstatSync, openSync, realpathSync, statSync, type Stats } from 'node:fs';
import { at, openFile } from '../../beneath.js';
import { dirname, isAbsolute, join } from 'node:path';
import { isInside, type StaticFile } from '../../commands/webapp-presentation.js';
import { realResolve } from '../projects/paths.js';
import type { ProjectRow } from '../../projections/projects.js';

/** Kind detection is the web app decider's rule (commands/webapp-presentation.ts); re-exported for its callers here. */
export { detectKind } from '../../commands/webapp-presentation.js';

/**
 * Static web apps on disk: where a target resolves when it is presented (a fact for the web app decider,
 * which keeps it inside the project; it is stored as its real path relative to the project) and how
 * `/apps/<id>/` opens a static app's files on each request — never by following a symlink.
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
 * The file `/apps/<id>/<segments…>` names, opened, or null (→ 404): the entry page for no segments, else a
 * file under the entry's directory (the entry itself when it is a directory). Segments are already
 * decoded; none may be empty, `.`/`..`, hidden (a leading dot: .git, .env stay private) or hold a
 * separator. A directory serves its index.html.
 *
 * The project's directory is agent-writable: every component from `/` to the file is opened without
 * following a symlink (beneath.ts), and the file is served from that descriptor — so no directory an
 * agent swaps for a symlink while the request runs can lead out of the project. The stored target is
 * the entry's real path relative to the project, so a legitimate app has no symlink on its way.
 * The caller closes the descriptor.
 */
export function openStaticFile(
  project: ProjectRow,
  target: string,
  segments: readonly string[],
): { fd: number; stats: Stats; path: string } | null {
  if (segments.some((s) => s === '' || s.startsWith('.') || /[/\\\0]/.test(s))) return null;
  const entry = join(project.path, target);
  if (!isInside(entry, project.path)) return null;
  if (segments.length === 0) return served(entry);
  const kind = entryKind(entry);
  if (kind === null) return null;
  return served(join(kind === 'directory' ? entry : dirname(entry), ...segments));
}

/** The file at `path` (a directory: its index.html), opened once with no symlink on the way; null for anything else. */
function served(path: string): { fd: number; stats: Stats; path: string } | null {
  let fd: number;
  try {
    fd = openFile(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isFile()) return { fd, stats, path };
    if (!stats.isDirectory()) return closed(fd);
    const index = openSync(at(fd, 'index.html'), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    closeSync(fd);
    fd = index;
    const indexStats = fstatSync(fd);
    return indexStats.isFile() ? { fd, stats: indexStats, path: join(path, 'index.html') } : closed(fd);
  } catch {
    return closed(fd);
  }
}

function entryKind(path: string): 'file' | 'directory' | null {
  const opened = served(path);
  if (opened === null) return null;
  closeSync(opened.fd);
  return opened.path === path ? 'file' : 'directory';
}

function closed(fd: number): null {
  closeSync(fd);
  return null;
}
