import type { App } from '../../app.js';
import { projectTaskDecider } from '../../commands/project-tasks.js';
import { DomainError } from '../../errors.js';
import { taskStream } from '../../events/tasks.js';
import { getChannelByName } from '../../projections/channel-queries.js';
import { getTask, type TaskRow } from '../../projections/task-queries.js';
import { readBlockerFacts } from '../../projections/task-blocker-queries.js';
import { applySteps } from '../../engine/projection-sql.js';
import { getProject, listProjects, projectForPath, type ProjectRow } from '../../projections/projects.js';
import { runtimeOf } from '../../projections/run-queries.js';
import { createPublicChannel } from '../channels.js';
import { agentIdOf, who } from '../goals.js';
import { projectOf } from '../projects.js';
import { taskFor } from '../tasks.js';
import { type Speaker } from '../../events/principals.js';
import { type CommandOptions } from '../../engine/handle.js';

/**
 * xylocopa's task_create / task_update / task_dispatch on Colony's one task aggregate. A project task is
 * created `proposed` (INBOX) with no goal; its notices go to the project's channel `#project-<name>`;
 * task_dispatch makes it `approved` (PENDING), claimable with claim_task like any goal task. The action
 * finds the project and the task; the project-task decider (commands/project-tasks.ts) refuses, with
 * xylocopa's texts, before anything is written.
 */
export interface NewProjectTask {
  title: string;
  project: string;
  description: string;
  model: string;
  effort: string;
  priority: number;
  cwd: string | null;
  /** Tasks of the same project it waits on (absent or []: none). */
  blockedBy?: number[];
}
export interface CreatedProjectTask {
  task: TaskRow;
  project: ProjectRow;
  inferred: boolean;
}

/** task_create: a task in the named project (else the one inferred), INBOX, its notices in the project's channel. */
export function createProjectTask(
  app: App,
  by: Speaker,
  input: NewProjectTask,
  actor: CommandOptions,
): CreatedProjectTask {
  const r = app.engine.transact(actor, (uow) => {
    const project = resolveProject(app, by, input.project, input.cwd);
    const channelId = projectChannel(app, by.tenant, project, actor);
    const taskId = uow.ids.next('task');
    app.engine.handle(
      projectTaskDecider,
      taskStream(taskId),
      {
        type: 'CreateProjectTask',
        task: {
          taskId,
          goalId: null,
          ownerId: by.tenant,
          projectId: project.projectId,
          parentId: null,
          depth: 0,
          ancestry: [],
          title: input.title,
          description: input.description,
          acceptanceCriteria: '',
          billingCode: project.name.toLowerCase(),
          budgets: { tokens: null, cents: null },
          verifier: { kind: 'auto' },
          heartbeat: null,
          status: 'proposed',
          proposalId: null,
          channelId,
          by: who(by),
          plan: { model: input.model || null, effort: input.effort || null, priority: input.priority },
          ...(input.blockedBy?.length ? { blockedBy: input.blockedBy } : {}),
        },
        found: applySteps(app.engine.db, readBlockerFacts(by.tenant, input.blockedBy ?? [])),
      },
      actor,
    );
    return taskId;
  });
  const created = r.events.find((e) => e.type === 'TaskCreated')?.data as { taskId: number } | undefined;
  const task = getTask(app.engine.db, r.value ?? created!.taskId)!;
  return { task, project: getProject(app.engine.db, task.projectId!)!, inferred: input.project === '' };
}

/** Explicit name; else the project of the caller's working directory (stdio) or of the calling agent (HTTP). */
function resolveProject(app: App, by: Speaker, name: string, cwd: string | null): ProjectRow {
  if (name) return projectOf(app, by.tenant, name);
  const agentId = agentIdOf(by);
  const own = agentId === null ? null : runtimeOf(app.engine.db, agentId).projectId;
  const project =
    cwd !== null ? projectForPath(app.engine.db, by.tenant, cwd) : own === null ? null : getProject(app.engine.db, own);
  if (!project) {
    const names =
      listProjects(app.engine.db, by.tenant, false)
        .map((p) => p.name)
        .join(', ') || '(none)';
    const where = cwd !== null ? `cwd (${cwd})` : 'the calling agent (it has no project)';
    throw new DomainError(
      'ErrProjectNotInferred',
      `Could not infer project from ${where}.\nPass \`project\` explicitly. Available: ${names}`,
    );
  }
  return project;
}

/** The name of a project's channel: `project-<name>` (lower-cased, other characters as '-'). */
export const projectChannelName = (project: Pick<ProjectRow, 'name'>): string =>
  `project-${project.name.toLowerCase().replace(/[^a-z0-9_-]/g, '-')}`.slice(0, 64);

/** The project's channel, created with its first task. */
function projectChannel(app: App, tenant: number, project: ProjectRow, actor: CommandOptions): number {
  const name = projectChannelName(project);
  return (
    getChannelByName(app.engine.db, tenant, name)?.channelId ??
    createPublicChannel(app, tenant, name, `Tasks of project ${project.name}`, actor)
  );
}

export interface TaskEdit {
  title: string;
  description: string;
  project: string;
  model: string;
  effort: string;
  priority: number | null;
}

/** task_update: the non-empty fields that differ (never the status); returns xylocopa's change labels, [] for none. */
export function updateProjectTask(
  app: App,
  by: Speaker,
  taskId: number,
  edit: TaskEdit,
  actor: CommandOptions,
): string[] {
  const r = app.engine.transact(actor, () => {
    const { task } = taskFor(app, by, taskId);
    const project = edit.project ? projectOf(app, by.tenant, edit.project) : null;
    const { title, description, model, effort, priority, projectId } = task;
    app.engine.handle(
      projectTaskDecider,
      taskStream(taskId),
      {
        type: 'UpdateProjectTask',
        edit,
        project: project && { projectId: project.projectId, name: project.name },
        current: { title, description, model, effort, priority, projectId },
        by: who(by),
      },
      actor,
    );
  });
  const updated = r.events.find((e) => e.type === 'TaskUpdated');
  return (updated?.data as { labels?: string[] } | undefined)?.labels ?? [];
}

export type DispatchOutcome = 'dispatched' | 'already_pending';

/** task_dispatch: INBOX, FAILED or TIMEOUT → PENDING (approved, claimable); already PENDING writes nothing. */
export function dispatchTask(
  app: App,
  by: Speaker,
  taskId: number,
  actor: CommandOptions,
): { task: TaskRow; outcome: DispatchOutcome } {
  const r = app.engine.transact(actor, () => {
    taskFor(app, by, taskId);
    const command = { type: 'DispatchProjectTask' as const, by: who(by) };
    const { events } = app.engine.handle(projectTaskDecider, taskStream(taskId), command, actor);
    return events.length > 0 ? ('dispatched' as const) : ('already_pending' as const);
  });
  return { task: getTask(app.engine.db, taskId)!, outcome: r.value ?? 'dispatched' };
}
