import * as z from 'zod';
import { taskFor } from '../../actions/tasks.js';
import { DomainError } from '../../errors.js';
import { TASK_STATUSES, XYLOCOPA_STATUS, type TaskStatus } from '../../events/task-status.js';
import type { TaskRow } from '../../projections/task-queries.js';
import { getProject, getProjectByName } from '../../projections/projects.js';
import { countTenantTasks, listTenantTasks } from '../../projections/task-views.js';
import { blockersOf } from '../../projections/task-blocker-queries.js';
import { defineTool, type ToolContext } from '../tool.js';
import { answer } from './xylocopa.js';
import { Counted, countedText, Got, gotText, Listed, listedText, taskView } from './task-text.js';
import { speaker } from '../../events/principals.js';

/**
 * xylocopa's task tools that only read — task_list, task_get, task_counts — and what the writing ones
 * (project-tasks.ts) share with them: the task-id argument and the lookup of a task by its id string.
 */
export const taskToolCommon = { surface: 'agent', module: 'tasks' } as const;
export const TaskId = z.string().max(100).describe("The task id (Colony's integer id, as a string)");
export const projectNameOf = (ctx: ToolContext, t: TaskRow): string | null =>
  t.projectId === null ? null : (getProject(ctx.app.engine.db, t.projectId)?.name ?? null);

/** The task in xylocopa's layout, with its project's name and its blockers' statuses. */
export const viewOf = (ctx: ToolContext, t: TaskRow) =>
  taskView(t, projectNameOf(ctx, t), blockersOf(ctx.app.engine.db, t));

/** A task of the caller's tenant by its id string; every miss reads ``Task `X` not found.`` */
export function ownTask(ctx: ToolContext, raw: string): TaskRow {
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

export const taskList = defineTool({
  ...taskToolCommon,
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
    const tasks = rows.map((r) => taskView(r.task, r.projectName, blockersOf(ctx.app.engine.db, r.task)));
    return { status: 'ok' as const, count: tasks.length, tasks, filters: { project: a.project, status: a.status } };
  },
  text: listedText,
});

export const taskGet = defineTool({
  ...taskToolCommon,
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
      return { status: 'ok' as const, task: viewOf(ctx, task) };
    }),
  text: gotText,
});

export const taskCounts = defineTool({
  ...taskToolCommon,
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
