import { describe, it } from 'node:test';
import { projectDecider, type ProjectCommand } from '../../src/commands/projects.js';
import { type ProjectArchived, type ProjectCreated, type ProjectReactivated } from '../../src/events/projects.js';
import { spec } from '../helpers/decider-spec.js';

/** The project decider on its own (given/when/then, no database): create, archive, re-activate. */
const by = { key: 'user-1', name: 'owner' };
const projectData: ProjectCreated['data'] = {
  projectId: 1,
  ownerId: 1,
  name: 'site',
  path: '/w/site',
  gitRemote: null,
  description: 'The site',
  by,
};
const data = projectData;
const created: ProjectCreated = { type: 'ProjectCreated', data };
const archived: ProjectArchived = { type: 'ProjectArchived', data: { projectId: 1, by } };
const reactivate = {
  type: 'ReactivateProject' as const,
  gitRemote: 'https://git.example/site',
  description: 'Another',
  by,
};

describe('project decider', () => {
  it('creates once; "" remote and description are stored as none', () => {
    spec(projectDecider)
      .given([])
      .when({ type: 'CreateProject', project: { ...data, gitRemote: '', description: ' ' } })
      .then([{ type: 'ProjectCreated', data: { ...data, gitRemote: null, description: null } }]);
    spec(projectDecider).given([created]).when({ type: 'CreateProject', project: data }).thenThrows('ErrProjectExists');
  });

  it('refuses a bad name or a relative path even when an action forgot to check', () => {
    spec(projectDecider)
      .given([])
      .when({ type: 'CreateProject', project: { ...data, name: 'a b' } })
      .thenThrows('ErrInvalidInput', 'Invalid project name');
    spec(projectDecider)
      .given([])
      .when({ type: 'CreateProject', project: { ...data, path: 'rel/site' } })
      .thenThrows('ErrInvalidInput', 'absolute');
  });

  it('archives an active project once; archiving again does nothing', () => {
    spec(projectDecider).given([created]).when({ type: 'ArchiveProject', by }).then([archived]);
    spec(projectDecider).given([created, archived]).when({ type: 'ArchiveProject', by }).thenNothingHappened();
    spec(projectDecider).given([]).when({ type: 'ArchiveProject', by }).thenThrows('ErrProjectNotFound');
  });

  it('re-activates an archived project, filling only the empty fields; an active one is left alone', () => {
    const back: ProjectReactivated = {
      type: 'ProjectReactivated',
      data: { projectId: 1, gitRemote: 'https://git.example/site', description: 'The site', by },
    };
    spec(projectDecider).given([created, archived]).when(reactivate).then([back]);
    spec(projectDecider).given([created]).when(reactivate).thenNothingHappened();
  });
});

describe("the project tools' rules", () => {
  /**
   * The project tools' rules in the project decider, given/when/then: project_create's name rule with
   * xylocopa's code and texts (RegisterProject), project_create of a name the owner has (ReactivateProject),
   * and archive_project, the owner's alone (ArchiveProject).
   */
  const owner = { key: 'user-1', name: 'owner' };
  const agent = { key: 'agent-3', name: 'worker' };
  const data: ProjectCreated['data'] = { ...projectData, by: agent };
  const created: ProjectCreated = { type: 'ProjectCreated', data };
  const archived: ProjectArchived = { type: 'ProjectArchived', data: { projectId: 1, by: owner } };
  const register = (name: string): ProjectCommand => ({
    type: 'RegisterProject',
    project: { ...data, name },
    agentPlaces: null,
  });
  const archive = (by = owner): ProjectCommand => ({ type: 'ArchiveProject', by });

  describe('project_create of a new name (RegisterProject)', () => {
    it('creates the project; "" remote and description are stored as none', () => {
      spec(projectDecider)
        .given([])
        .when({ type: 'RegisterProject', project: { ...data, gitRemote: ' ', description: '' }, agentPlaces: null })
        .then([{ type: 'ProjectCreated', data: { ...data, gitRemote: null, description: null } }]);
    });

    it("refuses a bad name with xylocopa's code and texts, the pattern before the length", () => {
      spec(projectDecider)
        .given([])
        .when(register('-dash-first'))
        .thenThrows(
          'ErrInvalidName',
          '^Invalid project name `-dash-first`\\. Must start with alphanumeric and contain only \\[a-zA-Z0-9._-\\]\\.$',
        );
      spec(projectDecider).given([]).when(register('.hidden')).thenThrows('ErrInvalidName', 'Invalid project name');
      spec(projectDecider)
        .given([])
        .when(register(`a/${'b'.repeat(200)}`))
        .thenThrows('ErrInvalidName', 'Invalid project name');
      spec(projectDecider)
        .given([])
        .when(register('x'.repeat(101)))
        .thenThrows('ErrInvalidName', '^Project name too long: 101 chars \\(max 100\\)\\.$');
    });

    it("puts an agent's project only in its own workspace or below the projects root (ErrProjectPathNotAllowed)", () => {
      const places = { ownWorkspace: '/d/workspace/agents/worker', projectsRoot: '/d/workspace/projects' };
      const at = (path: string): ProjectCommand => ({
        type: 'RegisterProject',
        project: { ...data, path },
        agentPlaces: places,
      });
      for (const path of ['/d/workspace/agents/worker', '/d/workspace/agents/worker/app', '/d/workspace/projects/site'])
        spec(projectDecider)
          .given([])
          .when(at(path))
          .then([{ type: 'ProjectCreated', data: { ...data, path } }]);
      for (const path of [
        '/d/workspace/agents/bob',
        '/d/workspace/agents/bob/x',
        '/d/workspace/agents/worker2',
        '/d/workspace/agents',
        '/d/workspace',
        '/d/workspace/projects',
        '/d/workspace/other',
        '/elsewhere',
      ])
        spec(projectDecider).given([]).when(at(path)).thenThrows('ErrProjectPathNotAllowed', 'own workspace');
    });

    it('accepts a name of 100 characters', () => {
      spec(projectDecider)
        .given([])
        .when(register('x'.repeat(100)))
        .then([{ type: 'ProjectCreated', data: { ...data, name: 'x'.repeat(100) } }]);
    });
  });

  describe('project_create of a name the owner has (ReactivateProject)', () => {
    const again: ProjectCommand = { type: 'ReactivateProject', gitRemote: '', description: 'New', by: agent };
    it('an active project is left as it is ("exists"); an archived one comes back, keeping its own values', () => {
      spec(projectDecider).given([created]).when(again).thenNothingHappened();
      const back: ProjectReactivated = {
        type: 'ProjectReactivated',
        data: { projectId: 1, gitRemote: null, description: 'The site', by: agent },
      };
      spec(projectDecider).given([created, archived]).when(again).then([back]);
    });
  });

  describe('archive_project (ArchiveProject)', () => {
    it("is the owner's: an agent of the team, or anyone else, is refused and nothing is written", () => {
      spec(projectDecider)
        .given([created])
        .when(archive(agent))
        .thenThrows('ErrForbidden', '^only the owner may archive a project$');
      spec(projectDecider)
        .given([created])
        .when(archive({ key: 'user-2', name: 'stranger' }))
        .thenThrows('ErrForbidden');
      spec(projectDecider)
        .given([created, archived])
        .when(archive({ key: 'system', name: 'system' }))
        .thenThrows('ErrForbidden');
    });

    it('the owner archives an active project; an archived one stays as it is', () => {
      spec(projectDecider).given([created]).when(archive()).then([archived]);
      spec(projectDecider).given([created, archived]).when(archive()).thenNothingHappened();
    });
  });
});
