import { DomainError } from '../errors.js';
import type { Decider, DecideContext } from '../engine/decider.js';
import type { By } from '../events/principals.js';
import { XYLOCOPA_STATUS } from '../events/task-status.js';
import type { TaskChanges, TaskEvent } from '../events/tasks.js';
import type { CreateTask, Task } from './task-types.js';
import { taskDecider } from './tasks.js';
import { checkBlockerList, checkBlockerScope, type BlockerFact } from './task-dependencies.js';

/**
 * xylocopa's task_create / task_update / task_dispatch on Colony's one task aggregate: the task decider's
 * state and events, with xylocopa's rules and texts in front of CreateTask, UpdateTask and DispatchTask.
 * A project task is created `proposed` (INBOX) with no goal; task_dispatch makes it `approved` (PENDING).
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

/**
 * task_create: the task as it will be created, in its project (resolved by the action), and the tasks its
 * `blockedBy` names as the caller's tenant has them (a missing one is not the tenant's).
 */
export type CreateProjectTask = { type: 'CreateProjectTask'; task: CreateTask['task']; found?: BlockerFact[] };
/**
 * task_update: the fields the caller gave ('' and null: not given), the project `project` named (null: none
 * named), and the task's values now. Only given fields that differ change; the status never does.
 */
export type UpdateProjectTask = {
  type: 'UpdateProjectTask';
  edit: { title: string; description: string; model: string; effort: string; priority: number | null };
  project: { projectId: number; name: string } | null;
  current: {
    title: string;
    description: string;
    model: string | null;
    effort: string | null;
    priority: number;
    projectId: number | null;
  };
  by: By;
};
/** task_dispatch: INBOX, FAILED or TIMEOUT → PENDING; a task already PENDING is left as it is. */
export type DispatchProjectTask = { type: 'DispatchProjectTask'; by: By };
export type ProjectTaskCommand = CreateProjectTask | UpdateProjectTask | DispatchProjectTask;

/** xylocopa's "Validation error" with every problem of the fields given, one per line. */
function validate(input: { title?: string; description?: string; model?: string | null; effort?: string | null }) {
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

function create(c: CreateProjectTask): CreateTask {
  const t = c.task;
  // xylocopa accepts an empty title and then can never dispatch the task: refused here.
  if (t.title.trim() === '')
    throw new DomainError('ErrInvalidInput', 'Validation error:\ntitle: must not be empty or only whitespace', {
      field: 'title',
    });
  validate({ title: t.title, description: t.description, model: t.plan?.model, effort: t.plan?.effort });
  const blockedBy = t.blockedBy ?? [];
  checkBlockerList(t.taskId, blockedBy, 'blocked_by', (id) => `#${id}`);
  checkBlockerScope(blockedBy, c.found ?? [], { goalId: t.goalId, projectId: t.projectId ?? null }, 'blocked_by');
  return { type: 'CreateTask', task: t };
}

/** The given fields that differ, with xylocopa's change labels ([] for none); a new title or description is validated. */
function update(c: UpdateProjectTask): { changes: TaskChanges; labels: string[] } {
  const { edit, current } = c;
  const changes: TaskChanges = {};
  const labels: string[] = [];
  if (c.project !== null && c.project.projectId !== current.projectId) {
    changes.projectId = c.project.projectId;
    labels.push(`project=${c.project.name}`);
  }
  if (edit.title && edit.title !== current.title) {
    changes.title = edit.title;
    labels.push('title');
  }
  if (edit.description && edit.description !== current.description) {
    changes.description = edit.description;
    labels.push('description');
  }
  if (edit.model && edit.model !== current.model) {
    changes.model = edit.model;
    labels.push(`model=${edit.model}`);
  }
  if (edit.effort && edit.effort !== current.effort) {
    changes.effort = edit.effort;
    labels.push(`effort=${edit.effort}`);
  }
  if (edit.priority !== null && edit.priority !== current.priority) {
    changes.priority = edit.priority;
    labels.push(`priority=${edit.priority}`);
  }
  validate({ title: changes.title, description: changes.description });
  return { changes, labels };
}

/** A task without a title cannot be dispatched; PENDING already is nothing to do; only INBOX, FAILED and TIMEOUT move. */
function dispatchable(state: Task): boolean {
  if (state.status === 'absent') return true; // the task decider answers ErrTaskNotFound
  const taskId = state.taskId;
  if (!state.title)
    throw new DomainError('ErrNoTitle', `Task ${taskId} has no title set; cannot dispatch.`, { task_id: taskId });
  if (state.status === 'approved') return false;
  if (state.status !== 'proposed' && state.status !== 'failed' && state.status !== 'timeout') {
    throw new DomainError(
      'ErrIllegalTransition',
      `Task ${taskId} cannot transition from ${XYLOCOPA_STATUS[state.status]} to PENDING.`,
      { task_id: taskId, from: state.status },
    );
  }
  return true;
}

function decide(command: ProjectTaskCommand, state: Task, ctx: DecideContext): readonly TaskEvent[] {
  switch (command.type) {
    case 'CreateProjectTask':
      return taskDecider.decide(create(command), state, ctx);
    case 'UpdateProjectTask': {
      const edit = update(command);
      if (edit.changes.projectId !== undefined && state.status !== 'absent' && state.blockedBy.length > 0)
        throw new DomainError(
          'ErrInvalidInput',
          `Task ${state.taskId} is blocked by tasks of its project: clear its blockers (set_task_blockers) before moving it to another project.`,
          { task_id: state.taskId, field: 'project' },
        );
      return taskDecider.decide({ type: 'UpdateTask', ...edit, by: command.by }, state, ctx);
    }
    case 'DispatchProjectTask':
      return dispatchable(state) ? taskDecider.decide({ type: 'DispatchTask', by: command.by }, state, ctx) : [];
    default: {
      const never: never = command;
      return never;
    }
  }
}

/** The task decider's streams, state and events; only the commands are xylocopa's. */
export const projectTaskDecider: Decider<Task, ProjectTaskCommand, TaskEvent> = {
  ...(taskDecider.snapshot ? { snapshot: taskDecider.snapshot } : {}),
  initialState: taskDecider.initialState,
  evolve: taskDecider.evolve,
  decide,
};
