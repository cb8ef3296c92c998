import { describe, it } from 'node:test';
import { projectDecider } from '../../src/commands/projects.js';
import type { ProjectArchived, ProjectCreated, ProjectReactivated } from '../../src/events/projects.js';
import { spec } from '../helpers/decider-spec.js';

/** The project decider on its own (given/when/then, no database): create, archive, re-activate. */
const by = { key: 'user-1', name: 'owner' };
const data: ProjectCreated['data'] = {
  projectId: 1,
  ownerId: 1,
  name: 'site',
  path: '/w/site',
  gitRemote: null,
  description: 'The site',
  by,
};
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
