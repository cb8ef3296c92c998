import { isAbsolute, join, relative, sep } from 'node:path';
import { DomainError, invalidInput } from '../errors.js';
import { MAX_APP_PORT, MIN_APP_PORT, WEBAPP_KINDS, type WebappKind } from '../events/webapps.js';

/**
 * webapp_present's rules, with xylocopa's texts and its quirks fixed: who may present, in which project,
 * and which targets (a static page inside the project, a port, an http(s) link). The action gathers the
 * facts — the agents, the project, where a static target resolves on disk, Colony's own port — and the web
 * app decider checks them in xylocopa's order (CheckPresentation) before anything is written.
 */
export interface PresentationFacts {
  /** The caller's arguments, as given. */
  target: string;
  kind: string;
  agentRef: string;
  /** The calling agent; null when the caller is the owner. */
  callerAgentId: number | null;
  /**
   * The agent `agentRef` names among the tenant's (else the calling agent); null when there is none.
   * `hostLoopback`: its processes share the host's loopback (network `host`, or its sandbox off) — else a
   * port on 127.0.0.1 is not its own but some other service of the host (actions/webapps/loopback.ts).
   */
  presenter: { agentId: number; name: string; stopped: boolean; hostLoopback: boolean } | null;
  /** The presenter's project; null when it has none. */
  project: { name: string; path: string; archived: boolean } | null;
  /** Where a static target resolves on disk; null for the other kinds. */
  staticFile: StaticFile | null;
  /** The port Colony itself serves on. */
  servedPort: number;
}

/**
 * A static target on disk, symlinks followed: `root` is the project's directory, null when it is missing
 * or no longer itself (its path was stored with symlinks resolved, so a directory swapped for a symlink
 * would widen "inside the project").
 */
export type StaticFile =
  { root: null } | { root: string; resolved: string; entry: 'missing' | 'directory' | 'file' | 'other' };

/** A port as Colony stores it: digits only, no leading zero, in the unprivileged range. */
export const validPort = (target: string): boolean =>
  /^[1-9][0-9]{0,4}$/.test(target) && Number(target) >= MIN_APP_PORT && Number(target) <= MAX_APP_PORT;

export const isInside = (path: string, root: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

/** xylocopa's detection when `kind` is empty; an explicit kind is lower-cased; null when it is none of the three. */
export function detectedKind(target: string, kind: string): WebappKind | null {
  const explicit = kind.trim().toLowerCase();
  if (explicit === '') return /^https?:\/\//i.test(target) ? 'url' : /^[0-9]+$/.test(target) ? 'port' : 'static';
  return (WEBAPP_KINDS as readonly string[]).includes(explicit) ? (explicit as WebappKind) : null;
}

export function detectKind(target: string, kind: string): WebappKind {
  const detected = detectedKind(target, kind);
  if (detected === null) throw invalidInput("Error: kind must be one of ('static', 'port', 'url').", { field: 'kind' });
  return detected;
}

/**
 * The stored form of a target: a static page's real path relative to the project's real path (so
 * "./index.html" is "index.html" while ".hidden/x.html" keeps its dot: the lstrip("./") quirk fixed), a
 * port's digits without leading zeros, a URL as given.
 */
export function storedTarget(kind: WebappKind, target: string, file: StaticFile | null): string {
  if (kind === 'port') return /^[0-9]+$/.test(target) ? String(Number(target)) : target;
  if (kind === 'static' && file?.root) return relative(file.root, file.resolved);
  return target;
}

/** webapp_present's checks in xylocopa's order: target, kind, the presenting agent, its project, the target. */
export function checkPresentation(f: PresentationFacts): void {
  const target = f.target.trim();
  if (target === '') throw invalidInput('Error: target is required.', { field: 'target' });
  const kind = detectKind(target, f.kind);
  const presenter = checkPresenter(f);
  if (presenter.stopped)
    throw new DomainError(
      'ErrAgentStopped',
      `Error: agent ${presenter.name} is stopped — only a running agent presents web apps.`,
      { agent_id: presenter.agentId },
    );
  const project = f.project;
  if (!project)
    throw new DomainError(
      'ErrNoProject',
      `Error: agent ${presenter.name} has no project. Its owner assigns one first: colony agents runtime ${presenter.name} --project NAME.`,
      { agent_id: presenter.agentId },
    );
  if (project.archived)
    throw new DomainError(
      'ErrProjectArchived',
      `Error: project ${project.name} is archived — project_create re-activates it.`,
      { project: project.name },
    );
  if (kind === 'static') checkStatic(target, project, f.staticFile ?? { root: null });
  else if (kind === 'port') {
    checkPort(target, f.servedPort);
    if (f.callerAgentId !== null) checkOwnLoopback(target, presenter);
  } else checkUrl(target);
}

/**
 * An agent presents a port only while it listens on the host's loopback: confined in a network of its own,
 * its servers are not there, and 127.0.0.1:<port> would be another service of the host (PostgreSQL,
 * Redis…) handed to whoever holds the URL. The owner may present any port.
 */
function checkOwnLoopback(target: string, presenter: NonNullable<PresentationFacts['presenter']>): void {
  if (presenter.hostLoopback) return;
  throw new DomainError(
    'ErrPortNotAllowed',
    `Error: agent ${presenter.name} runs in a network of its own (its network is not host), so nothing it serves is on this host's port ${String(Number(target))} — only the owner may present that port (or set: colony agents runtime ${presenter.name} --network host).`,
    { agent_id: presenter.agentId, port: Number(target) },
  );
}

/** The agent named (for an agent, only itself: naming another would post the card under its name and tie the port to its lifetime), else the caller. */
function checkPresenter(f: PresentationFacts): NonNullable<PresentationFacts['presenter']> {
  if (f.agentRef.trim() === '') {
    if (f.presenter) return f.presenter;
    throw new DomainError(
      'ErrUnknownCaller',
      "Error: could not identify the calling agent (this is an owner token, not an agent's). Pass agent_id explicitly.",
    );
  }
  if (!f.presenter)
    throw new DomainError('ErrNotFound', `Error: agent ${f.agentRef} not found.`, { agent_id: f.agentRef });
  if (f.callerAgentId !== null && f.presenter.agentId !== f.callerAgentId)
    throw new DomainError(
      'ErrForbidden',
      'Error: agent_id names another agent — an agent presents web apps as itself.',
      {
        agent_id: f.agentRef,
      },
    );
  return f.presenter;
}

/**
 * An .html/.htm file inside the project's real directory: the page opens in a sandboxed frame, and only a
 * document makes sense there — presenting a key file or a database would just publish it.
 */
function checkStatic(target: string, project: { name: string; path: string }, file: StaticFile): void {
  if (file.root === null)
    throw new DomainError(
      'ErrProjectPathMissing',
      `Error: project ${project.name} directory is missing or was replaced by a link (${project.path}).`,
      { path: project.path },
    );
  if (!isInside(file.resolved, file.root))
    throw new DomainError(
      'ErrPathOutsideRoots',
      `Error: ${target} is outside project ${project.name} (${project.path}) — static apps must live inside the project directory.`,
      { target, project: project.name },
    );
  if (file.entry === 'missing')
    throw new DomainError(
      'ErrNotFound',
      `Error: ${target} not found in project ${project.name}. Create the file first.`,
      { target },
    );
  if (file.entry === 'directory')
    throw invalidInput(
      `Error: ${target} is a directory — present the .html file in it (e.g. ${join(target, 'index.html')}).`,
      { target },
    );
  if (file.entry !== 'file' || !/\.html?$/i.test(file.resolved))
    throw invalidInput(
      `Error: ${target} is not an .html file — a static app is an HTML page (its scripts, styles and images may sit next to it).`,
      { target },
    );
}

/** 1024–65535 and never the port Colony itself serves on; a non-number is a clear refusal (xylocopa raised). */
function checkPort(target: string, servedPort: number): void {
  if (!/^[0-9]+$/.test(target))
    throw invalidInput(
      `Error: port must be a number in ${MIN_APP_PORT}-${MAX_APP_PORT} (got ${JSON.stringify(target)}).`,
      { field: 'target' },
    );
  const canonical = String(Number(target));
  if (!validPort(canonical))
    throw invalidInput(`Error: port must be in ${MIN_APP_PORT}-${MAX_APP_PORT}.`, { field: 'target' });
  if (Number(canonical) === servedPort)
    throw invalidInput("Error: cannot proxy the orchestrator's own port.", { field: 'target' });
}

/** A link the card opens: http(s) only (no javascript:, data: or file: URLs), with a host. */
function checkUrl(target: string): void {
  let url: URL | null = null;
  try {
    url = new URL(target);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '' || /\s/.test(target))
    throw invalidInput('Error: url must be an http:// or https:// URL.', { field: 'target' });
}
