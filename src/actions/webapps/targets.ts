import { realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { validPort } from '../../commands/webapps.js';
import { DomainError, invalidInput } from '../../errors.js';
import { MAX_APP_PORT, MIN_APP_PORT, WEBAPP_KINDS, type WebappKind } from '../../events/webapps.js';
import { realResolve } from '../projects/paths.js';
import type { ProjectRow } from '../../projections/projects.js';
import { servedPort } from '../../public-url.js';

/**
 * What webapp_present accepts as a target, with xylocopa's texts (reference §1.5) and its quirks fixed
 * (§1.9 item 5), and how `/apps/<id>/` finds a static app's files again. Every static path is resolved
 * with symlinks followed and must lie inside the project's real directory — when presented and again on
 * every request, so a symlink planted later cannot lead out.
 */
const refuse = (message: string, details?: Record<string, unknown>): DomainError => invalidInput(message, details);

/** xylocopa's detection when `kind` is empty; an explicit kind is lower-cased and must be one of the three. */
export function detectKind(target: string, kind: string): WebappKind {
  const explicit = kind.trim().toLowerCase();
  if (explicit === '') return /^https?:\/\//i.test(target) ? 'url' : /^[0-9]+$/.test(target) ? 'port' : 'static';
  if (!(WEBAPP_KINDS as readonly string[]).includes(explicit))
    throw refuse("Error: kind must be one of ('static', 'port', 'url').", { field: 'kind' });
  return explicit as WebappKind;
}

/** The stored form of the target: the project-relative path, the port's digits, or the URL. */
export function checkTarget(kind: WebappKind, target: string, project: ProjectRow): string {
  switch (kind) {
    case 'static':
      return checkStatic(target, project);
    case 'port':
      return checkPort(target);
    case 'url':
      return checkUrl(target);
    default: {
      const never: never = kind;
      return never;
    }
  }
}

export const isInside = (path: string, root: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

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

/**
 * A static target: absolute, or relative to the project directory. Stored as the real path relative to
 * the project's real path — so "./index.html" is "index.html" while ".hidden/x.html" keeps its dot (the
 * lstrip("./") quirk fixed). It must be an .html/.htm file: the page opens in a sandboxed frame, and
 * only a document makes sense there — presenting a key file or a database would just publish it.
 */
function checkStatic(target: string, project: ProjectRow): string {
  const root = projectRoot(project);
  const outside = `Error: ${target} is outside project ${project.name} (${project.path}) — static apps must live inside the project directory.`;
  if (root === null)
    throw new DomainError(
      'ErrProjectPathMissing',
      `Error: project ${project.name} directory is missing or was replaced by a link (${project.path}).`,
      { path: project.path },
    );
  const resolved = realResolve(isAbsolute(target) ? target : join(root, target));
  if (!isInside(resolved, root))
    throw new DomainError('ErrPathOutsideRoots', outside, { target, project: project.name });
  const stats = statOf(resolved);
  if (!stats)
    throw new DomainError(
      'ErrNotFound',
      `Error: ${target} not found in project ${project.name}. Create the file first.`,
      { target },
    );
  if (stats.isDirectory())
    throw refuse(
      `Error: ${target} is a directory — present the .html file in it (e.g. ${join(target, 'index.html')}).`,
      { target },
    );
  if (!stats.isFile() || !/\.html?$/i.test(resolved)) {
    throw refuse(
      `Error: ${target} is not an .html file — a static app is an HTML page (its scripts, styles and images may sit next to it).`,
      { target },
    );
  }
  return relative(root, resolved);
}

/** 1024–65535 and never the port Colony itself serves on; a non-number is a clear refusal (xylocopa raised). */
function checkPort(target: string): string {
  if (!/^[0-9]+$/.test(target))
    throw refuse(`Error: port must be a number in ${MIN_APP_PORT}-${MAX_APP_PORT} (got ${JSON.stringify(target)}).`, {
      field: 'target',
    });
  const canonical = String(Number(target));
  if (!validPort(canonical))
    throw refuse(`Error: port must be in ${MIN_APP_PORT}-${MAX_APP_PORT}.`, { field: 'target' });
  if (Number(canonical) === servedPort())
    throw refuse("Error: cannot proxy the orchestrator's own port.", { field: 'target' });
  return canonical;
}

/** A link the card opens: http(s) only (no javascript:, data: or file: URLs), with a host. */
function checkUrl(target: string): string {
  let url: URL | null = null;
  try {
    url = new URL(target);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '' || /\s/.test(target)) {
    throw refuse('Error: url must be an http:// or https:// URL.', { field: 'target' });
  }
  return target;
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
