import { senderKind } from '../../events/channels.js';
import type { Database } from 'better-sqlite3';
import { getMessage } from '../../projections/channel-queries.js';
import { getGoal } from '../../projections/goal-queries.js';
import { getProject } from '../../projections/projects.js';
import { getTask, type TaskRow } from '../../projections/task-queries.js';
import type { AgentRow } from '../../projections/principal-queries.js';
import type { RunRow } from '../../projections/run-queries.js';

/**
 * The wake prompt — what a run's process reads on stdin and the first message of its session:
 * the agent's system prompt, the goal and the task's ancestry, the task's description and acceptance
 * criteria (a project task's project, model, effort, priority and attempt too), and why it woke (the
 * messages, the probe's envelope, execute_agent's prompt, what a task fact asks of it). Plain Markdown,
 * so a CLI agent such as `claude -p` can take it as is.
 */
export function wakePrompt(db: Database, agent: AgentRow, run: RunRow): string {
  const parts: string[] = [`# System prompt\n\n${agent.systemPrompt}`];
  const goal = run.goalId === null ? null : getGoal(db, run.goalId);
  if (goal)
    parts.push(
      `# Goal #${goal.goalId}: ${goal.title} (${goal.status})\n\n${goal.description || '(no description)'}\n\nChannel: #goal-${goal.slug}`,
    );
  const task = run.taskId === null ? null : getTask(db, run.taskId);
  if (task) {
    const ancestry = task.ancestry.map((a, i) => `${'  '.repeat(i)}- #${a.id} ${a.title}`).join('\n');
    parts.push(
      [
        `# Task #${task.taskId}: ${task.title} (${task.status})`,
        '',
        task.description || '(no description)',
        '',
        '## Acceptance criteria',
        '',
        task.acceptanceCriteria || '(none given)',
        ...(ancestry ? ['', '## Ancestry (root first)', '', ancestry] : []),
        '',
        `Billing code: ${task.billingCode}. Verifier: ${task.verifier.kind}.`,
        ...planLine(db, task),
      ].join('\n'),
    );
  }
  parts.push(wakeSection(db, run));
  return `${parts.join('\n\n')}\n`;
}

function wakeSection(db: Database, run: RunRow): string {
  const sources = [...new Set(run.wakes.map((w) => w.source))].join(', ');
  const lines = [`# Wake-up: ${sources}`];
  for (const w of run.wakes) if (w.prompt) lines.push('', w.prompt);
  const ids = [...new Set(run.wakes.flatMap((w) => w.messageIds))];
  if (ids.length > 0) lines.push('', '## Messages');
  for (const id of ids) {
    const m = getMessage(db, id);
    // The sender's kind, not just its name: a name can be imitated, the kind cannot.
    if (m)
      lines.push(
        '',
        `[#${m.messageId} in ${m.channelName} from ${m.fromName} (${senderKind(m.fromKey)}) at ${m.createdAt}]`,
        m.body,
      );
  }
  return lines.join('\n');
}

/** xylocopa's plan of a project task — the model and effort it asks for reach the run's env too (COLONY_TASK_MODEL, COLONY_TASK_EFFORT). */
function planLine(db: Database, task: TaskRow): string[] {
  const parts = [
    task.projectId === null ? null : `Project: ${getProject(db, task.projectId)?.name ?? `#${task.projectId}`}.`,
    task.model ? `Model: ${task.model}.` : null,
    task.effort ? `Effort: ${task.effort}.` : null,
    task.projectId === null ? null : `Priority: ${task.priority}. Attempt: ${task.attempt}.`,
  ].filter((p) => p !== null);
  return parts.length > 0 ? [parts.join(' ')] : [];
}
