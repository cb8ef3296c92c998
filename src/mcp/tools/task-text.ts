import * as z from 'zod';
import { outcome, refusedText } from './xylocopa.js';
import { XYLOCOPA_STATUS } from '../../events/task-status.js';
import type { TaskRow } from '../../projections/task-queries.js';
import type { BlockerStatus } from '../../projections/task-blocker-queries.js';

/**
 * The shapes and texts of xylocopa's task tools. The text is rendered from the structuredContent, so
 * the canonical tools and their aliases answer byte for byte the same. A refusal is an ordinary result
 * (`{status: 'error', error_code, message}`, the text its message). Every "not found" reads
 * ``Task `X` not found.`` — with backticks — whichever tool says it: xylocopa's tools worded this miss in
 * more than one way; Colony uses one, keeping the phrase "not found" that clients look for.
 */
export const TaskView = z.object({
  task_id: z.string().describe("Colony's task id, as a string"),
  title: z.string(),
  status: z
    .string()
    .describe("xylocopa's vocabulary: INBOX, PENDING, EXECUTING, REVIEW, COMPLETE, FAILED, TIMEOUT, CANCELLED"),
  colony_status: z.string(),
  project: z.string().nullable(),
  goal_id: z.number().int().nullable(),
  model: z.string().nullable(),
  effort: z.string().nullable(),
  priority: z.number().int(),
  attempt: z.number().int(),
  agent_id: z.string().nullable().describe('The assignee'),
  created_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  description: z.string(),
  error: z.string().nullable(),
  summary: z.string().nullable(),
  blocked_by: z
    .array(z.object({ task_id: z.string(), status: z.string(), done: z.boolean() }))
    .describe('The tasks it waits on (claimable once each is done), each with its status in the same vocabulary'),
});
export type TaskViewT = z.infer<typeof TaskView>;

export const Created = z.object({ ...outcome, task: TaskView.optional(), inferred: z.boolean().optional() });
export const Got = z.object({ ...outcome, task: TaskView.optional() });
export const Listed = z.object({
  ...outcome,
  count: z.number().int(),
  tasks: z.array(TaskView),
  filters: z.object({ project: z.string(), status: z.string() }),
});
export const Counted = z.object({
  ...outcome,
  project: z.string(),
  total: z.number().int(),
  counts: z.record(z.string(), z.number().int()),
});
export const Updated = z.object({
  ...outcome,
  task_id: z.string().optional(),
  changes: z.array(z.string()).optional(),
});
export const Dispatched = z.object({ ...outcome, task: TaskView.optional(), already_pending: z.boolean().optional() });

export function taskView(t: TaskRow, project: string | null, blockers: readonly BlockerStatus[] = []): TaskViewT {
  return {
    task_id: String(t.taskId),
    title: t.title,
    status: XYLOCOPA_STATUS[t.status],
    colony_status: t.status,
    project,
    goal_id: t.goalId,
    model: t.model,
    effort: t.effort,
    priority: t.priority,
    attempt: t.attempt,
    agent_id: t.assigneeAgentId === null ? null : String(t.assigneeAgentId),
    created_at: t.createdAt,
    started_at: t.claimedAt,
    completed_at: t.completedAt,
    description: t.description,
    error: t.failureReason,
    summary: t.summary,
    blocked_by: blockers.map((b) => ({
      task_id: String(b.taskId),
      status: XYLOCOPA_STATUS[b.status],
      done: b.status === 'done',
    })),
  };
}

const ts19 = (iso: string | null): string => (iso ?? '').slice(0, 19);
const cut = (text: string, n: number, mark: string): string => (text.length > n ? `${text.slice(0, n)}${mark}` : text);
const refused = refusedText;

export function createdText(r: z.infer<typeof Created>): string {
  const t = r.task;
  if (refused(r) !== null || !t) return refused(r) ?? '';
  return [
    `Created task \`${t.task_id}\` in project \`${t.project}${r.inferred ? ' (inferred from cwd)' : ''}\` [${t.status}].`,
    `Title: ${t.title}`,
    `Model: ${t.model ?? '(project default)'}  Effort: ${t.effort ?? '(default)'}  Priority: ${t.priority}`,
  ].join('\n');
}

export function gotText(r: z.infer<typeof Got>): string {
  const t = r.task;
  if (refused(r) !== null || !t) return refused(r) ?? '';
  const lines = [
    `# Task: ${t.title}`,
    `- id: \`${t.task_id}\``,
    `- status: ${t.status}`,
    `- project: ${t.project ?? '(none)'}`,
    `- model: ${t.model ?? '(default)'}  effort: ${t.effort ?? '(default)'}  priority: ${t.priority}`,
    `- attempt: ${t.attempt}`,
    `- agent_id: ${t.agent_id ?? '(none)'}`,
    ...(t.blocked_by.length
      ? [`- blocked by: ${t.blocked_by.map((b) => `\`${b.task_id}\` (${b.status})`).join(', ')}`]
      : []),
    '- worktree: (none)  branch: (none)',
    `- created: ${ts19(t.created_at)}`,
    `- started: ${t.started_at ? ts19(t.started_at) : '(not started)'}`,
    `- completed: ${t.completed_at ? ts19(t.completed_at) : '(not completed)'}`,
    '',
    '## Description',
    t.description ? cut(t.description, 1000, '\n... (truncated)') : '(no description)',
  ];
  if (t.error) lines.push('', '## Error', cut(t.error, 500, ''));
  if (t.summary) lines.push('', '## Agent summary', cut(t.summary, 1000, ''));
  return lines.join('\n');
}

export function listedText(r: z.infer<typeof Listed>): string {
  if (refused(r) !== null) return refused(r)!;
  if (r.count === 0) {
    const given = [
      r.filters.project ? `project=${r.filters.project}` : '',
      r.filters.status ? `status=${r.filters.status}` : '',
    ].filter(Boolean);
    return `No tasks found.${given.length ? ` (${given.join(', ')})` : ''}`;
  }
  const rows = r.tasks.map(
    (t) =>
      `- **${cut(t.title, 120, '') || '(untitled)'}** [${t.status}] — ${t.project ?? '(no project)'}\n  id: \`${t.task_id}\`  priority: ${t.priority}  created: ${ts19(t.created_at)}`,
  );
  return `Found ${r.count} task(s):\n\n${rows.join('\n')}`;
}

export function countedText(r: z.infer<typeof Counted>): string {
  if (refused(r) !== null) return refused(r)!;
  if (r.total === 0) return `No tasks found.${r.project ? ` (project=${r.project})` : ''}`;
  const lines = Object.entries(r.counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `  ${s}: ${n}`);
  return [
    `Task counts for ${r.project ? `project \`${r.project}\`` : 'all projects'} (total: ${r.total}):`,
    ...lines,
  ].join('\n');
}

export function updatedText(r: z.infer<typeof Updated>): string {
  if (refused(r) !== null) return refused(r)!;
  if (!r.changes?.length)
    return `Task ${r.task_id}: no changes (all provided fields matched current values or were empty).`;
  return `Updated task ${r.task_id}: ${r.changes.join(', ')}.`;
}

export function dispatchedText(r: z.infer<typeof Dispatched>): string {
  const t = r.task;
  if (refused(r) !== null || !t) return refused(r) ?? '';
  if (r.already_pending) return `Task ${t.task_id} is already PENDING; awaiting dispatch.`;
  return `Task ${t.task_id} (${t.title}) queued for dispatch. It is PENDING now: an agent of the team can claim it (claim_task).`;
}
