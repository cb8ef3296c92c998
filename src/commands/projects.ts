import { isAbsolute, relative, sep } from 'node:path';
import { DomainError, invalidInput } from '../errors.js';
import { MAX_PROJECT_NAME, PROJECT_NAME, type ProjectCreated, type ProjectEvent } from '../events/projects.js';
import type { Decider } from '../engine/decider.js';
import { type By, isOwner } from '../events/principals.js';

/**
 * The project decider (`project-<n>` streams): created once, then archived and re-activated any number
 * of times. Names are unique per owner across streams: project_create looks the name up inside its
 * transaction and sends RegisterProject to a new stream only when the owner has no project of that name
 * (else ReactivateProject to the one it has).
 */
/** A project record as it will be stored; its name and path are checked again whoever sends it. */
export type CreateProject = { type: 'CreateProject'; project: ProjectCreated['data'] };
/**
 * project_create of a name the owner has no project under: xylocopa's name rule first (ErrInvalidName, its
 * texts). `agentPlaces` is where an agent may put a project — its own workspace, or below the team's projects
 * root — and null when the owner creates it (anywhere in the allowed roots, checked by the path policy).
 */
export type RegisterProject = {
  type: 'RegisterProject';
  project: ProjectCreated['data'];
  agentPlaces: AgentProjectPlaces | null;
};
/** An agent's own workspace directory (`<workspace>/agents/<name>`) and the projects root (`<workspace>/projects`). */
export interface AgentProjectPlaces {
  ownWorkspace: string;
  projectsRoot: string;
}
/**
 * project_create of a name the owner has: an archived project comes back, filling git remote and
 * description only where it has none (xylocopa's re-activation); an active one is left as it is.
 */
export type ReactivateProject = {
  type: 'ReactivateProject';
  gitRemote: string | null;
  description: string | null;
  by: By;
};
/** archive_project: only the project's owner archives it; archiving an archived project changes nothing. */
export type ArchiveProject = { type: 'ArchiveProject'; by: By };
export type ProjectCommand = CreateProject | RegisterProject | ReactivateProject | ArchiveProject;

interface Known {
  projectId: number;
  ownerId: number;
  name: string;
  gitRemote: string | null;
  description: string | null;
}
export type Project = { status: 'absent' } | (Known & { status: 'active' | 'archived' });

/** xylocopa's name checks in its order, with its texts: the refusal, or null for a good name. */
export function projectNameError(name: string): string | null {
  if (!PROJECT_NAME.test(name))
    return `Invalid project name \`${name}\`. Must start with alphanumeric and contain only [a-zA-Z0-9._-].`;
  if (name.length > MAX_PROJECT_NAME) return `Project name too long: ${name.length} chars (max ${MAX_PROJECT_NAME}).`;
  return null;
}

/** "" and whitespace mean "none", as in xylocopa's `git_url or '(local)'`. */
export const orNull = (value: string | null | undefined): string | null =>
  value && value.trim() !== '' ? value : null;

function evolve(state: Project, event: ProjectEvent): Project {
  switch (event.type) {
    case 'ProjectCreated': {
      const d = event.data;
      return {
        status: 'active',
        projectId: d.projectId,
        ownerId: d.ownerId,
        name: d.name,
        gitRemote: d.gitRemote,
        description: d.description,
      };
    }
    case 'ProjectReactivated':
      return state.status === 'absent'
        ? state
        : { ...state, status: 'active', gitRemote: event.data.gitRemote, description: event.data.description };
    case 'ProjectArchived':
      return state.status === 'absent' ? state : { ...state, status: 'archived' };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function decide(command: ProjectCommand, state: Project): ProjectEvent[] {
  if (command.type === 'CreateProject') return create(command.project, state);
  if (command.type === 'RegisterProject') {
    const bad = projectNameError(command.project.name);
    if (bad !== null) throw new DomainError('ErrInvalidName', bad, { field: 'name' });
    if (command.agentPlaces) checkAgentPlace(command.project.path, command.agentPlaces);
    return create(command.project, state);
  }
  if (state.status === 'absent') throw new DomainError('ErrProjectNotFound', 'project not found');
  const projectId = state.projectId;
  switch (command.type) {
    case 'ReactivateProject':
      if (state.status === 'active') return [];
      return [
        {
          type: 'ProjectReactivated',
          data: {
            projectId,
            gitRemote: state.gitRemote ?? orNull(command.gitRemote),
            description: state.description ?? orNull(command.description),
            by: command.by,
          },
        },
      ];
    case 'ArchiveProject':
      if (!isOwner(command.by, state.ownerId))
        throw new DomainError('ErrForbidden', 'only the owner may archive a project');
      return state.status === 'archived' ? [] : [{ type: 'ProjectArchived', data: { projectId, by: command.by } }];
    default: {
      const never: never = command;
      return never;
    }
  }
}

/**
 * An agent's project lies in its own workspace or strictly below the projects root: never in another
 * agent's directory (a CLAUDE.md there is read by that agent's CLI as instructions), never the workspace
 * or its `agents` directory themselves (every agent's directory lies under them).
 */
function checkAgentPlace(path: string, places: AgentProjectPlaces): void {
  const below = (root: string) => {
    const rel = relative(root, path);
    return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
  };
  if (path === places.ownWorkspace || below(places.ownWorkspace) || below(places.projectsRoot)) return;
  throw new DomainError(
    'ErrProjectPathNotAllowed',
    `An agent's project lies in its own workspace (${places.ownWorkspace}) or under the projects root (${places.projectsRoot}); ${path} is neither. Nothing was created.`,
    { field: 'path', path, allowed: [places.ownWorkspace, places.projectsRoot] },
  );
}

function create(p: ProjectCreated['data'], state: Project): ProjectEvent[] {
  if (state.status !== 'absent')
    throw new DomainError('ErrProjectExists', `project ${state.name} already exists`, { project_id: state.projectId });
  const bad = projectNameError(p.name);
  if (bad !== null) throw invalidInput(bad, { field: 'name' });
  if (!isAbsolute(p.path)) throw invalidInput('a project path is absolute', { field: 'path' });
  return [
    { type: 'ProjectCreated', data: { ...p, gitRemote: orNull(p.gitRemote), description: orNull(p.description) } },
  ];
}

export const projectDecider: Decider<Project, ProjectCommand, ProjectEvent> = {
  snapshot: { name: 'project', version: 1 },
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
