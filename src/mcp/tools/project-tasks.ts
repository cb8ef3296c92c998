import * as z from 'zod';
import { createProjectTask, dispatchTask, updateProjectTask } from '../../actions/projects/tasks.js';
import { taskFor } from '../../actions/tasks.js';
import { DomainError } from '../../errors.js';
import { TASK_STATUSES, XYLOCOPA_STATUS, type TaskStatus } from '../../events/tasks.js';
import type { TaskRow } from '../../projections/task-queries.js';
import { getProject, getProjectByName } from '../../projections/projects.js';
import { countTenantTasks, listTenantTasks } from '../../projections/task-views.js';
import { defineTool, type AnyTool, type ToolContext } from '../tool.js';
import { answer } from './xylocopa.js';
import {
  Counted,
  countedText,
  Created,
  createdText,
  Dispatched,
  dispatchedText,
  Got,
  gotText,
  Listed,
  listedText,
  taskView,
  Updated,
  updatedText,
} from './task-text.js';
import { speaker } from '../../events/principals.js';

/**
 * xylocopa's task tools on Colony's one task aggregate (reference §1.5, DESIGN §3.18): task_list,
 * task_get, task_counts, task_create (→ INBOX = proposed), task_update (never the status), task_dispatch
 * (INBOX, FAILED, TIMEOUT → PENDING = approved, claimable with claim_task), and the aliases list_tasks,
 * create_task, update_task, dispatch_task — the same definitions under a second name, so their output is
 * byte-identical. Statuses are shown in xylocopa's vocabulary; filters take it or Colony's.
 */
const common = { surface: 'agent', module: 'tasks' } as const;
const TaskId = z.string().max(100).describe("The task id (Colony's integer id, as a string)");
const projectNameOf = (ctx: ToolContext, t: TaskRow): string | null =>
  t.projectId === null ? null : (getProject(ctx.app.engine.db, t.projectId)?.name ?? null);

/** A task of the caller's tenant by its id string; every miss reads ``Task `X` not found.`` */
function ownTask(ctx: ToolContext, raw: string): TaskRow {
  const id = /^\d{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : null;
  try {
    if (id !== null) return taskFor(ctx.app, speaker(ctx.caller), id).task;
  } catch (e) {
    if (!(e instanceof DomainError) || e.code !== 'ErrTaskNotFound') throw e;
  }
  throw new DomainError('ErrTaskNotFound', `Task \`${raw}\` not found.`, { task_id: raw });
}

/** xylocopa's names (INBOX, PENDING, EXECUTING, REVIEW, …) or Colony's; unknown names match nothing. */
function statusesFor(raw: string): TaskStatus[] | null {
  const s = raw.trim();
  if (!s) return null;
  if ((TASK_STATUSES as readonly string[]).includes(s.toLowerCase())) return [s.toLowerCase() as TaskStatus];
  return TASK_STATUSES.filter((c) => XYLOCOPA_STATUS[c] === s.toUpperCase());
}

const list = defineTool({
  ...common,
  name: 'task_list',
  title: 'List tasks',
  trust: 'read',
  description:
    "Lists your team's tasks — project tasks and goal tasks — newest first. project: a project name; status: xylocopa's (INBOX, PENDING, EXECUTING, REVIEW, COMPLETE, FAILED, TIMEOUT, CANCELLED, any case) or Colony's (proposed, approved, claimed, in_progress, …); limit clamped to 1–100. Answers \"No tasks found.\" when nothing matches.",
  input: z.strictObject({
    project: z.string().max(200).default(''),
    status: z.string().max(50).default(''),
    limit: z.number().int().default(30),
  }),
  output: Listed,
  handler(ctx, a) {
    const tenant = speaker(ctx.caller).tenant;
    const project = a.project ? getProjectByName(ctx.app.engine.db, tenant, a.project) : null;
    const rows =
      a.project && !project
        ? []
        : listTenantTasks(ctx.app.engine.db, {
            ownerId: tenant,
            projectId: project?.projectId ?? null,
            statuses: statusesFor(a.status),
            limit: Math.min(100, Math.max(1, a.limit)),
          });
    const tasks = rows.map((r) => taskView(r.task, r.projectName));
    return { status: 'ok' as const, count: tasks.length, tasks, filters: { project: a.project, status: a.status } };
  },
  text: listedText,
});

const get = defineTool({
  ...common,
  name: 'task_get',
  title: 'Get a task',
  trust: 'read',
  description:
    'One task of your team in xylocopa\'s layout: status (INBOX, PENDING, EXECUTING, REVIEW, COMPLETE, FAILED, TIMEOUT, CANCELLED), project, model, effort, priority, attempt, assignee, times, description, error and the agent\'s summary. Answers "Task `X` not found." for an unknown id.',
  input: z.strictObject({ task_id: TaskId }),
  output: Got,
  handler: (ctx, a) =>
    answer(() => {
      const task = ownTask(ctx, a.task_id);
      return { status: 'ok' as const, task: taskView(task, projectNameOf(ctx, task)) };
    }),
  text: gotText,
});

const counts = defineTool({
  ...common,
  name: 'task_counts',
  title: 'Count tasks by status',
  trust: 'read',
  description:
    'How many of your team\'s tasks are in each status (xylocopa\'s vocabulary), for one project or all. "INBOX: 1" per line.',
  input: z.strictObject({ project: z.string().max(200).default('') }),
  output: Counted,
  handler(ctx, a) {
    const tenant = speaker(ctx.caller).tenant;
    const project = a.project ? getProjectByName(ctx.app.engine.db, tenant, a.project) : null;
    const byStatus: Record<string, number> = {};
    if (!a.project || project) {
      for (const r of countTenantTasks(ctx.app.engine.db, tenant, project?.projectId ?? null))
        byStatus[XYLOCOPA_STATUS[r.status]] = (byStatus[XYLOCOPA_STATUS[r.status]] ?? 0) + r.count;
    }
    return {
      status: 'ok' as const,
      project: a.project,
      total: Object.values(byStatus).reduce((x, y) => x + y, 0),
      counts: byStatus,
    };
  },
  text: countedText,
});

const create = defineTool({
  ...common,
  name: 'task_create',
  title: 'Create a task',
  trust: 'write',
  description:
    'Creates a task in a project, status INBOX (Colony: proposed); task_dispatch makes it PENDING so an agent can claim it. project: its name; "" infers it — from your working directory when you talk to Colony over stdio, else from your agent\'s project. model (one of Colony\'s known Claude models), effort (low|medium|high|xhigh|max|ultracode) and priority are kept for the agent that works on it. Not idempotent: two calls make two tasks. Answers "Created task `ID` …" or xylocopa\'s refusal text.',
  input: z.strictObject({
    title: z.string().max(1000),
    project: z.string().max(200).default(''),
    description: z.string().max(100_000).default(''),
    model: z.string().max(100).default(''),
    effort: z.string().max(20).default(''),
    priority: z.number().int().default(0),
  }),
  output: Created,
  handler: (ctx, a) =>
    answer(() => {
      const r = createProjectTask(ctx.app, speaker(ctx.caller), { ...a, cwd: ctx.cwd }, ctx.command);
      return { status: 'ok' as const, task: taskView(r.task, r.project.name), inferred: r.inferred };
    }),
  text: createdText,
});

const update = defineTool({
  ...common,
  name: 'task_update',
  title: 'Update a task',
  trust: 'write',
  description:
    'Changes a task\'s title, description, project, model, effort or priority — only the fields you give (non-empty) that differ; never its status (task_dispatch, claim_task, complete_task do that). Answers "Updated task ID: title, …", or "no changes".',
  input: z.strictObject({
    task_id: TaskId,
    title: z.string().max(1000).default(''),
    description: z.string().max(100_000).default(''),
    project: z.string().max(200).default(''),
    model: z.string().max(100).default(''),
    effort: z.string().max(20).default(''),
    priority: z.number().int().nullable().default(null),
  }),
  output: Updated,
  handler: (ctx, a) =>
    answer(() => {
      const task = ownTask(ctx, a.task_id);
      const changes = updateProjectTask(ctx.app, speaker(ctx.caller), task.taskId, a, ctx.command);
      return { status: 'ok' as const, task_id: String(task.taskId), changes };
    }),
  text: updatedText,
});

const dispatch = defineTool({
  ...common,
  name: 'task_dispatch',
  title: 'Dispatch a task',
  trust: 'write',
  description:
    'Queues a task for work: INBOX, FAILED or TIMEOUT → PENDING (Colony: approved), so an agent of the team can claim it; a FAILED or TIMEOUT task comes back as a new attempt. A task already PENDING is left as it is ("already PENDING", nothing written).',
  input: z.strictObject({ task_id: TaskId }),
  output: Dispatched,
  handler: (ctx, a) =>
    answer(() => {
      const task = ownTask(ctx, a.task_id);
      const r = dispatchTask(ctx.app, speaker(ctx.caller), task.taskId, ctx.command);
      return {
        status: 'ok' as const,
        task: taskView(r.task, projectNameOf(ctx, r.task)),
        already_pending: r.outcome === 'already_pending',
      };
    }),
  text: dispatchedText,
});

const alias = (tool: AnyTool, name: string): AnyTool => ({
  ...tool,
  name,
  description: `Alias of ${tool.name}. ${tool.description}`,
});

export const projectTaskTools: readonly AnyTool[] = [
  list,
  get,
  counts,
  create,
  update,
  dispatch,
  alias(list, 'list_tasks'),
  alias(create, 'create_task'),
  alias(update, 'update_task'),
  alias(dispatch, 'dispatch_task'),
];
