import { closeSync, realpathSync } from 'node:fs';
import { openDir, PathRefused } from '../beneath.js';
import { sandboxOwner } from '../sandbox-user.js';
import { join } from 'node:path';
import type { App } from '../app.js';
import { orNull, projectDecider } from '../commands/projects.js';
import { DomainError } from '../errors.js';
import type { StoredEvent } from '../engine/event.js';
import { projectStream } from '../events/projects.js';
import { getProject, getProjectByName, listProjects, type ProjectRow } from '../projections/projects.js';
import { who } from './goals.js';
import { FileJournal, scaffoldFiles, type ProjectRecord, type ScaffoldResult } from './projects/files.js';
import { agentWorkspace, workspaceRoot } from './projects/paths.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * Project commands (xylocopa's project_* tools), scoped to the caller's tenant. Refusals are DomainErrors
 * whose message is xylocopa's text: the project decider makes those of project_create and archive_project
 * before anything is written; project_scaffold and project_regenerate_claude_md write files but no event,
 * so their checks of the project and its directory are made here. The caller passes a `path` the path
 * policy already resolved and accepted; "" means the default, `<data>/workspace/projects/<name>`, which
 * lies inside the workspace root by construction.
 */
export type CreateOutcome = 'created' | 'exists' | 'reactivated';
export interface CreatedProject {
  outcome: CreateOutcome;
  project: ProjectRow;
  scaffold: ScaffoldResult | null;
}
export interface NewProject {
  name: string;
  path: string;
  gitUrl: string;
  description: string;
}

/**
 * Every project lookup that misses says the same: xylocopa's ``Project `X` not found.`` plus the tenant's
 * active projects to choose from — project_get's list, for every tool that takes a project name
 * (task_create…) alike.
 */
export function projectNotFound(app: App, tenant: number, name: string): DomainError {
  const names = listProjects(app.engine.db, tenant, false).map((p) => p.name);
  return new DomainError(
    'ErrProjectNotFound',
    `Project \`${name}\` not found.\nAvailable: ${names.length ? names.join(', ') : '(none)'}`,
    { project: name },
  );
}

/** A project of the tenant by name (archived ones included), or the not-found refusal. */
export function projectOf(app: App, tenant: number, name: string): ProjectRow {
  const project = getProjectByName(app.engine.db, tenant, name);
  if (!project) throw projectNotFound(app, tenant, name);
  return project;
}

/**
 * project_create: a name the tenant has goes to that project (an archived one comes back, an active one is
 * left as it is: 'exists'); a new name creates the project and its directory and files, all or nothing.
 */
export function createProject(app: App, by: Speaker, input: NewProject, actor: CommandOptions): CreatedProject {
  const journal = new FileJournal(sandboxOwner());
  try {
    const result = app.engine.transact(actor, (uow) => {
      const existing = getProjectByName(app.engine.db, by.tenant, input.name);
      if (existing) {
        const { events } = app.engine.handle(
          projectDecider,
          projectStream(existing.projectId),
          { type: 'ReactivateProject', gitRemote: input.gitUrl, description: input.description, by: who(by) },
          actor,
        );
        const outcome: CreateOutcome = events.length > 0 ? 'reactivated' : 'exists';
        return { outcome, projectId: existing.projectId, scaffold: null };
      }
      const n = uow.ids.next('project');
      const record: ProjectRecord = {
        name: input.name,
        path: input.path || defaultPath(app, input.name),
        gitRemote: orNull(input.gitUrl),
        description: orNull(input.description),
      };
      app.engine.handle(
        projectDecider,
        projectStream(n),
        {
          type: 'RegisterProject',
          project: { projectId: n, ownerId: by.tenant, ...record, by: who(by) },
          agentPlaces: by.key.startsWith('agent-')
            ? { ownWorkspace: agentWorkspace(app, by.name), projectsRoot: join(workspaceRoot(app), 'projects') }
            : null,
        },
        actor,
      );
      return { outcome: 'created' as const, projectId: n, scaffold: writeFiles(journal, record) };
    });
    const value = result.value ?? replayed(result.events, by.tenant, input.name, app);
    return { ...value, project: getProject(app.engine.db, value.projectId)! };
  } catch (e) {
    journal.rollback(); // the transaction rolled back the events; this removes what the files steps made
    throw e;
  }
}

/** Creates the directory, then scaffolds; a failing step throws, and the caller undoes everything. */
function writeFiles(journal: FileJournal, p: ProjectRecord): ScaffoldResult {
  try {
    journal.mkdirp(p.path);
  } catch (e) {
    throw new DomainError('ErrProjectFiles', `Could not create directory ${p.path}: ${(e as Error).message}`, {
      path: p.path,
    });
  }
  try {
    return scaffoldFiles(journal, p);
  } catch (e) {
    throw new DomainError(
      'ErrProjectFiles',
      `Scaffold failed for \`${p.name}\`: ${(e as Error).message}\nNothing was created: the project was rolled back.`,
      { path: p.path },
    );
  }
}

const defaultPath = (app: App, name: string): string => join(workspaceRoot(app), 'projects', name);

/** A retried command id (idempotency key): what its first run did, read from the events it appended. */
function replayed(events: readonly StoredEvent[], tenant: number, name: string, app: App) {
  const first = events.find((e) => e.type === 'ProjectCreated' || e.type === 'ProjectReactivated');
  const outcome: CreateOutcome = first?.type === 'ProjectCreated' ? 'created' : first ? 'reactivated' : 'exists';
  return { outcome, projectId: projectOf(app, tenant, name).projectId, scaffold: null };
}

/**
 * The project's directory as registered: it must still exist and still be itself (no symlink anywhere on
 * it). This is the friendly first answer; the writes themselves never follow a symlink either (files.ts),
 * so a swap after this check is refused there.
 */
function checkedDir(p: ProjectRow, verb: 'Scaffold' | 'Regenerate'): void {
  try {
    closeSync(openDir(p.path));
  } catch (e) {
    if (!(e instanceof PathRefused)) throw e;
    if (e.reason === 'missing')
      throw new DomainError('ErrProjectPathMissing', `Project \`${p.name}\` path does not exist on disk: ${p.path}`, {
        path: p.path,
      });
    throw new DomainError(
      'ErrProjectFiles',
      `${verb} failed for \`${p.name}\`: ${p.path} now resolves to ${resolvesTo(p.path)}; nothing was written.`,
      { path: p.path },
    );
  }
}

/** Where a path leads now, for a message (it may change again at once: never used for anything else). */
function resolvesTo(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return 'something that is not its directory';
  }
}

/** An active project of the tenant whose files may be written; archived ones are outside the allowed roots now. */
function writable(app: App, by: Speaker, name: string, verb: 'Scaffold' | 'Regenerate'): ProjectRow {
  const p = projectOf(app, by.tenant, name);
  if (p.archived)
    throw new DomainError('ErrProjectArchived', `Project \`${name}\` is archived: project_create re-activates it.`, {
      project: name,
    });
  checkedDir(p, verb);
  return p;
}

/** Runs a files step; on failure undoes its writes and answers xylocopa's "<verb> failed" text. */
function filesStep<T>(p: ProjectRow, verb: 'Scaffold' | 'Regenerate', fn: (journal: FileJournal) => T): T {
  const journal = new FileJournal(sandboxOwner());
  try {
    return fn(journal);
  } catch (e) {
    journal.rollback();
    throw new DomainError('ErrProjectFiles', `${verb} failed for \`${p.name}\`: ${(e as Error).message}`, {
      path: p.path,
    });
  }
}

/** project_scaffold: writes CLAUDE.md and PROGRESS.md where missing or not yet scaffolded. Writes no event. */
export function scaffoldProject(app: App, by: Speaker, name: string): { project: ProjectRow; result: ScaffoldResult } {
  const p = writable(app, by, name, 'Scaffold');
  return { project: p, result: filesStep(p, 'Scaffold', (j) => scaffoldFiles(j, p)) };
}

/** project_regenerate_claude_md: re-renders CLAUDE.md from the record, keeping the rules block; `changed` is false when the bytes were already those. */
export function regenerateClaudeMd(app: App, by: Speaker, name: string): { project: ProjectRow; changed: boolean } {
  const p = writable(app, by, name, 'Regenerate');
  return { project: p, changed: filesStep(p, 'Regenerate', (j) => scaffoldFiles(j, p, true)).claudeMd };
}

/** archive_project: a soft delete (the files stay and the name stays taken), the owner's alone (the project decider refuses anyone else). */
export function archiveProject(
  app: App,
  by: Speaker,
  name: string,
  actor: CommandOptions,
): { project: ProjectRow; archived: boolean } {
  const result = app.engine.transact(actor, () => {
    const p = projectOf(app, by.tenant, name);
    const command = { type: 'ArchiveProject' as const, by: who(by) };
    return app.engine.handle(projectDecider, projectStream(p.projectId), command, actor).events.length > 0;
  });
  return { project: projectOf(app, by.tenant, name), archived: result.value ?? result.events.length > 0 };
}
