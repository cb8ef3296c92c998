import type { App } from '../../app.js';
import { taskDecider } from '../../commands/tasks.js';
import { DomainError } from '../../errors.js';
import { taskStream, XYLOCOPA_STATUS, type TaskChanges } from '../../events/tasks.js';
import { getChannelByName } from '../../projections/channel-queries.js';
import { getTask, type TaskRow } from '../../projections/task-queries.js';
import { getProject, listProjects, projectForPath, type ProjectRow } from '../../projections/projects.js';
import { runtimeOf } from '../../projections/run-queries.js';
import { createPublicChannel } from '../channels.js';
import { agentIdOf, who } from '../goals.js';
import { projectOf } from '../projects.js';
import { taskFor } from '../tasks.js';
import { type Speaker } from '../../events/principals.js';
import { type CommandOptions } from '../../engine/handle.js';

/**
 * xylocopa's task_create / task_update / task_dispatch on Colony's one task aggregate (DESIGN §2, §3.5,
 * §3.18). A project task is created `proposed` (INBOX) with no goal; its notices go to the project's
 * channel `#project-<name>`; task_dispatch makes it `approved` (PENDING), claimable with claim_task like
 * any goal task. Refusals are DomainErrors whose message is xylocopa's text.
 */
export const VALID_MODELS = [
  'claude-fable-5-1',
  'claude-fable-5',
  'claude-opus-5',
  'claude-opus-4-8',
  'claude-opus-4-7',
  'claude-opus-4-6',
  'claude-sonnet-5',
  'claude-sonnet-4-6',
  'claude-haiku-4-5-20251001',
] as const;
export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max', 'ultracode'] as const;
export const MAX_TITLE = 300;
export const MAX_DESCRIPTION = 50_000;

export interface NewProjectTask {
  title: string;
  project: string;
  description: string;
  model: string;
  effort: string;
  priority: number;
  cwd: string | null;
}
export interface CreatedProjectTask {
  task: TaskRow;
  project: ProjectRow;
  inferred: boolean;
}

export function createProjectTask(
  app: App,
  by: Speaker,
  input: NewProjectTask,
  actor: CommandOptions,
): CreatedProjectTask {
  // xylocopa accepts an empty title and then can never dispatch the task (reference §1.9 item 3): refused here, before anything is written.
  if (input.title.trim() === '')
    throw new DomainError('ErrInvalidInput', 'Validation error:\ntitle: must not be empty or only whitespace', {
      field: 'title',
    });
  const { project, inferred } = resolveProject(app, by, input.project, input.cwd);
  validate(input);
  const r = app.engine.transact(actor, (uow) => {
    const channelId = projectChannel(app, by.tenant, project, actor);
    const taskId = uow.ids.next('task');
    app.engine.handle(
      taskDecider,
      taskStream(taskId),
      {
        type: 'CreateTask',
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
        },
      },
      actor,
    );
    return taskId;
  });
  const taskId = r.value ?? (r.events[0]!.data as { taskId: number }).taskId;
  return { task: getTask(app.engine.db, taskId)!, project, inferred };
}

/** Explicit name; else the project of the caller's working directory (stdio) or of the calling agent (HTTP). */
function resolveProject(
  app: App,
  by: Speaker,
  name: string,
  cwd: string | null,
): { project: ProjectRow; inferred: boolean } {
  if (name) return { project: projectOf(app, by.tenant, name), inferred: false };
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
  return { project, inferred: true };
}

function validate(input: { title?: string; description?: string; model?: string; effort?: string }): void {
  const problems: string[] = [];
  if (input.title !== undefined && input.title.length > MAX_TITLE)
    problems.push(`title: at most ${MAX_TITLE} characters (got ${input.title.length})`);
  if (input.description !== undefined && input.description.length > MAX_DESCRIPTION)
    problems.push(`description: at most ${MAX_DESCRIPTION} characters`);
  if (input.model && !(VALID_MODELS as readonly string[]).includes(input.model))
    problems.push(`model: must be one of ${VALID_MODELS.join(', ')} (got '${input.model}')`);
  if (input.effort && !(EFFORTS as readonly string[]).includes(input.effort))
    problems.push(`effort: must be one of ${EFFORTS.join('|')} (got '${input.effort}')`);
  if (problems.length > 0) throw new DomainError('ErrInvalidInput', `Validation error:\n${problems.join('\n')}`);
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

/** task_update: applies the non-empty fields that differ (never the status); returns xylocopa's change labels, [] for none. */
export function updateProjectTask(
  app: App,
  by: Speaker,
  taskId: number,
  edit: TaskEdit,
  actor: CommandOptions,
): string[] {
  const r = app.engine.transact(actor, () => {
    const { task } = taskFor(app, by, taskId);
    const changes: TaskChanges = {};
    const labels: string[] = [];
    if (edit.project) {
      const project = projectOf(app, by.tenant, edit.project);
      if (project.projectId !== task.projectId) {
        changes.projectId = project.projectId;
        labels.push(`project=${project.name}`);
      }
    }
    if (edit.title && edit.title !== task.title) {
      changes.title = edit.title;
      labels.push('title');
    }
    if (edit.description && edit.description !== task.description) {
      changes.description = edit.description;
      labels.push('description');
    }
    if (edit.model && edit.model !== task.model) {
      changes.model = edit.model;
      labels.push(`model=${edit.model}`);
    }
    if (edit.effort && edit.effort !== task.effort) {
      changes.effort = edit.effort;
      labels.push(`effort=${edit.effort}`);
    }
    if (edit.priority !== null && edit.priority !== task.priority) {
      changes.priority = edit.priority;
      labels.push(`priority=${edit.priority}`);
    }
    validate({ title: changes.title, description: changes.description });
    app.engine.handle(taskDecider, taskStream(taskId), { type: 'UpdateTask', changes, labels, by: who(by) }, actor);
    return labels;
  });
  return r.value ?? (r.events[0]?.data as { labels?: string[] } | undefined)?.labels ?? [];
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
    const { task } = taskFor(app, by, taskId);
    if (!task.title)
      throw new DomainError('ErrNoTitle', `Task ${taskId} has no title set; cannot dispatch.`, { task_id: taskId });
    if (task.status === 'approved') return 'already_pending' as const;
    if (task.status !== 'proposed' && task.status !== 'failed' && task.status !== 'timeout') {
      throw new DomainError(
        'ErrIllegalTransition',
        `Task ${taskId} cannot transition from ${XYLOCOPA_STATUS[task.status]} to PENDING.`,
        { task_id: taskId, from: task.status },
      );
    }
    app.engine.handle(taskDecider, taskStream(taskId), { type: 'DispatchTask', by: who(by) }, actor);
    return 'dispatched' as const;
  });
  return { task: getTask(app.engine.db, taskId)!, outcome: r.value ?? 'dispatched' };
}
