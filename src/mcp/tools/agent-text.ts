import * as z from 'zod';
import { cut, ts19 } from '../views/session-text.js';

/**
 * The texts of xylocopa's agent_list and agent_get, rendered from their
 * structuredContent. Fields Colony has no counterpart for are shown as NOT_APPLICABLE ("-").
 */
export const NOT_APPLICABLE = '-';

const AgentSummary = z.object({
  agent_id: z.number().int(),
  name: z.string(),
  status: z.string().describe('Runtime status: IDLE, EXECUTING, ERROR or STOPPED'),
  project: z.string(),
  session_id: z.string().nullable().describe('Its latest session, if it has run'),
  model: z.string(),
  effort: z.string(),
  last_activity_at: z.string().describe('Its last message, else its creation'),
  preview: z.string().describe('The start of its last message'),
});

export const AgentList = z.object({
  filters: z.object({ project: z.string(), status: z.string() }),
  count: z.number().int(),
  agents: z.array(AgentSummary),
});
export type AgentList = z.infer<typeof AgentList>;

export function agentListText(v: AgentList): string {
  if (v.count === 0) {
    const filters = [
      v.filters.project && `project=${v.filters.project}`,
      v.filters.status && `status=${v.filters.status}`,
    ].filter(Boolean);
    return `No agents found.${filters.length ? ` (${filters.join(', ')})` : ''}`;
  }
  const rows = v.agents.map(
    (a) =>
      `- **${a.name}** [${a.status}] — ${a.project}\n  id: \`${a.agent_id}\`  session: \`${a.session_id ?? '(none)'}\`\n` +
      `  model: ${a.model || '(default)'}  effort: ${a.effort || '(default)'}  last: ${ts19(a.last_activity_at)}\n  ${cut(a.preview, 80)}`,
  );
  return [`Found ${v.count} agent(s):\n`, ...rows].join('\n');
}

export const AgentDetail = z.object({
  identifier: z.string(),
  found: z.boolean(),
  agent: AgentSummary.omit({ last_activity_at: true })
    .extend({
      mode: z.literal('AUTO').describe("Colony agents run on their own (xylocopa's AUTO; it has no INTERVIEW mode)"),
      branch: z.string(),
      worktree: z.string(),
      tmux_pane: z.string(),
      task_id: z.number().int().nullable().describe('The task of its latest run'),
      parent_id: z.number().int().nullable().describe('The agent that spawned it'),
      is_subagent: z.boolean(),
      unread: z.number().int().describe('Direct messages to it not yet read'),
      muted: z.boolean(),
      pending_suggestions: z.boolean(),
      created_at: z.string(),
      last_message_at: z.string().nullable(),
    })
    .nullable(),
});
export type AgentDetail = z.infer<typeof AgentDetail>;

/** Python's str(bool): the reference prints `True` / `False`. */
const py = (b: boolean): string => (b ? 'True' : 'False');

export function agentDetailText(v: AgentDetail): string {
  const a = v.agent;
  if (!v.found || !a) return `No agent found matching: ${v.identifier}`;
  return [
    `# Agent: ${a.name}`,
    `- id: \`${a.agent_id}\``,
    `- project: ${a.project}`,
    `- status: ${a.status}`,
    `- mode: ${a.mode}`,
    `- session_id: \`${a.session_id ?? '(none)'}\``,
    `- model: ${a.model || '(default)'}  effort: ${a.effort || '(default)'}`,
    `- branch: ${a.branch}  worktree: ${a.worktree}`,
    `- tmux_pane: ${a.tmux_pane}`,
    `- task_id: ${a.task_id ?? NOT_APPLICABLE}`,
    `- parent_id: ${a.parent_id ?? NOT_APPLICABLE}  is_subagent: ${py(a.is_subagent)}`,
    `- unread: ${a.unread}  muted: ${py(a.muted)}  pending_suggestions: ${py(a.pending_suggestions)}`,
    `- created: ${ts19(a.created_at)}`,
    `- last_message_at: ${a.last_message_at ? ts19(a.last_message_at) : '(never)'}`,
    '',
    '## Last message preview',
    cut(a.preview || '(no messages)', 200),
  ].join('\n');
}
