import * as z from 'zod';
import { createProjectTask, dispatchTask, updateProjectTask } from '../../actions/projects/tasks.js';
import { defineTool, type AnyTool } from '../tool.js';
import { ownTask, taskCounts, taskGet, taskList, TaskId, taskToolCommon, viewOf } from './project-task-reads.js';
import { answer } from './xylocopa.js';
import { Created, createdText, Dispatched, dispatchedText, Updated, updatedText } from './task-text.js';
import { speaker } from '../../events/principals.js';

/**
 * xylocopa's task tools on Colony's one task aggregate: task_list, task_get, task_counts (the reads, in
 * project-task-reads.ts), task_create (→ INBOX = proposed), task_update (never the status), task_dispatch
 * (INBOX, FAILED, TIMEOUT → PENDING = approved, claimable with claim_task), and the aliases list_tasks,
 * create_task, update_task, dispatch_task — the same definitions under a second name, so their output is
 * byte-identical. Like every xylocopa tool they answer with xylocopa's texts (xylocopa.ts). Statuses are
 * shown in xylocopa's vocabulary; filters take it or Colony's.
 */
const create = defineTool({
  ...taskToolCommon,
  name: 'task_create',
  title: 'Create a task',
  trust: 'write',
  description:
    'Creates a task in a project, status INBOX (Colony: proposed); task_dispatch makes it PENDING so an agent can claim it. project: its name; "" infers it — from your working directory when you talk to Colony over stdio, else from your agent\'s project. model (one of Colony\'s known Claude models), effort (low|medium|high|xhigh|max|ultracode) and priority are kept for the agent that works on it. blocked_by: ids of tasks of the same project it waits on (at most 32; each COMPLETE before it can be claimed; set_task_blockers changes them). Not idempotent: two calls make two tasks. Answers "Created task `ID` …" or xylocopa\'s refusal text.',
  input: z.strictObject({
    title: z.string().max(1000),
    project: z.string().max(200).default(''),
    description: z.string().max(100_000).default(''),
    model: z.string().max(100).default(''),
    effort: z.string().max(20).default(''),
    priority: z.number().int().default(0),
    blocked_by: z
      .array(z.number().int().positive())
      .max(100)
      .default([])
      .describe('Ids of tasks of the same project it waits on (at most 32): claimable once each is COMPLETE'),
  }),
  output: Created,
  handler: (ctx, a) =>
    answer(() => {
      const { blocked_by: blockedBy, ...rest } = a;
      const r = createProjectTask(ctx.app, speaker(ctx.caller), { ...rest, blockedBy, cwd: ctx.cwd }, ctx.command);
      return { status: 'ok' as const, task: viewOf(ctx, r.task), inferred: r.inferred };
    }),
  text: createdText,
});

const update = defineTool({
  ...taskToolCommon,
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
  ...taskToolCommon,
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
        task: viewOf(ctx, r.task),
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
  taskList,
  taskGet,
  taskCounts,
  create,
  update,
  dispatch,
  alias(taskList, 'list_tasks'),
  alias(create, 'create_task'),
  alias(update, 'update_task'),
  alias(dispatch, 'dispatch_task'),
];
