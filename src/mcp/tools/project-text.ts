import * as z from 'zod';
import { outcome, refusedText } from './xylocopa.js';
import { TASK_STATUSES, XYLOCOPA_STATUS } from '../../events/task-status.js';
import type { ProjectStats } from '../../projections/overview-queries.js';
import type { ProjectRow } from '../../projections/projects.js';

/**
 * The shapes and texts of xylocopa's project tools. The text is rendered from the
 * structuredContent, so the two never disagree. As with every xylocopa tool here, a refusal is an
 * ordinary result whose text is xylocopa's (``Project `X` not found.…``, ``Invalid project name…``),
 * with structuredContent `{status: 'error', error_code, message}` (see probe-text.ts).
 * Colony projects have no default model, emoji or max_concurrent: the model shows as `(default)` (the
 * agent's own) and the other two are left out.
 */
export const ProjectView = z.object({
  project_id: z.number().int(),
  name: z.string(),
  path: z.string(),
  git_remote: z.string().nullable(),
  description: z.string().nullable(),
  archived: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
type View = z.infer<typeof ProjectView>;

export const view = (p: ProjectRow): View => ({
  project_id: p.projectId,
  name: p.name,
  path: p.path,
  git_remote: p.gitRemote,
  description: p.description,
  archived: p.archived,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
});

const Stats = z.object({
  agents: z.number().int(),
  active_agents: z.number().int().describe('Agents of the project whose runtime status is executing'),
  sessions: z.number().int(),
  tasks: z
    .record(z.string(), z.number().int())
    .describe("Tasks by status in xylocopa's vocabulary (INBOX, PENDING, EXECUTING, …)"),
  task_statuses: z.record(z.string(), z.number().int()).describe("The same by Colony's status"),
});
export const Listed = z.object({
  ...outcome,
  count: z.number().int(),
  include_archived: z.boolean(),
  projects: z.array(ProjectView),
});
export const Got = z.object({ ...outcome, project: ProjectView.optional(), stats: Stats.optional() });
export const Created = z.object({
  ...outcome,
  action: z
    .enum(['created', 'exists', 'reactivated'])
    .optional()
    .describe('What happened: created, already there (nothing changed) or re-activated'),
  project: ProjectView.optional(),
  scaffolded: z.object({ claude_md: z.boolean(), progress_md: z.boolean() }).nullable().optional(),
});
export const Scaffolded = z.object({
  ...outcome,
  project: z.string().optional(),
  claude_md: z.boolean().optional(),
  progress_md: z.boolean().optional(),
});
export const Regenerated = z.object({
  ...outcome,
  project: z.string().optional(),
  changed: z.boolean().optional().describe('False when CLAUDE.md already had exactly these bytes'),
});
export const Archived = z.object({
  ...outcome,
  project: ProjectView.optional(),
  archived: z.boolean().optional().describe('False when it was already archived'),
});

/** Colony statuses → xylocopa's, in the state machine's order (claimed and in_progress are both EXECUTING). */
export function statsView(s: ProjectStats): z.infer<typeof Stats> {
  const tasks: Record<string, number> = {};
  for (const status of TASK_STATUSES) {
    const n = s.tasks[status];
    if (n) tasks[XYLOCOPA_STATUS[status]] = (tasks[XYLOCOPA_STATUS[status]] ?? 0) + n;
  }
  return { agents: s.agents, active_agents: s.active, sessions: s.sessions, tasks, task_statuses: s.tasks };
}

const tag = (p: View): string => (p.archived ? ' [ARCHIVED]' : '');

export function listedText(r: z.infer<typeof Listed>): string {
  if (r.projects.length === 0) return 'No projects found.';
  const rows = r.projects.map(
    (p) =>
      `- **${p.name}**${tag(p)} — \`${p.path}\`\n  model: (default)  git: ${p.git_remote ?? '(local)'}\n  ${p.description ?? ''}`,
  );
  return [`Found ${r.count} project(s):\n`, ...rows].join('\n');
}

export function gotText(r: z.infer<typeof Got>): string {
  const p = r.project;
  if (!p || !r.stats) return refusedText(r) ?? '';
  const s = r.stats;
  const tasks = Object.entries(s.tasks)
    .map(([status, n]) => `${status}=${n}`)
    .join(', ');
  return [
    `# Project: ${p.name}${tag(p)}`,
    `- display_name: ${p.name}`,
    `- path: \`${p.path}\``,
    `- git_remote: ${p.git_remote ?? '(local)'}`,
    '- default_model: (default)',
    `- description: ${p.description ?? '(none)'}`,
    '',
    '## Stats',
    `- agents: ${s.agents} total, ${s.active_agents} active`,
    `- sessions: ${s.sessions}`,
    `- tasks: ${tasks || '(none)'}`,
  ].join('\n');
}

export function createdText(r: z.infer<typeof Created>): string {
  const p = r.project;
  if (!p) return refusedText(r) ?? '';
  switch (r.action) {
    case 'exists':
      return `Project \`${p.name}\` already exists (active).\nPath: ${p.path}\nNo changes made.`;
    case 'reactivated':
      return `Project \`${p.name}\` re-activated from archive.\nPath: ${p.path}`;
    default:
      return `Created project \`${p.name}\`.\nPath: ${p.path}\nGit: ${p.git_remote ?? '(local)'}\nScaffolded CLAUDE.md and PROGRESS.md if missing.`;
  }
}

export function scaffoldedText(r: z.infer<typeof Scaffolded>): string {
  const refused = refusedText(r);
  if (refused !== null) return refused;
  const parts = [r.claude_md && 'CLAUDE.md created', r.progress_md && 'PROGRESS.md created'].filter(Boolean);
  return `Project \`${r.project}\`: ${parts.length ? parts.join(', ') : 'no changes (files already present)'}.`;
}

/**
 * xylocopa always rewrote CLAUDE.md and said "Regenerated" (its check 12 calls this right after
 * project_create, when nothing differs). Here the file is only rewritten when its bytes differ, and the
 * text says so — keeping the word "Regenerated" either way, since the file is the regenerated one.
 */
export function regeneratedText(r: z.infer<typeof Regenerated>): string {
  const refused = refusedText(r);
  if (refused !== null) return refused;
  return `Regenerated CLAUDE.md for \`${r.project}\` (project-specific rules preserved)${r.changed ? '.' : ': no changes (already up to date).'}`;
}

export function archivedText(r: z.infer<typeof Archived>): string {
  const p = r.project;
  if (!p) return refusedText(r) ?? '';
  return r.archived
    ? `Archived project \`${p.name}\`.\nPath: ${p.path} (its files stay on disk)\nproject_create with the same name re-activates it.`
    : `Project \`${p.name}\` is already archived.\nNo changes made.`;
}
