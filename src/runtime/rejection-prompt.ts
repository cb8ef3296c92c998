import type { TaskVerified } from '../events/tasks.js';
import type { TaskRow } from '../projections/task-queries.js';

/**
 * The wake-up of an assignee whose hand-in was rejected within its goal's retry limit
 * (verification_rejected): the task is its again, and the verifier's feedback — its reason and, for a
 * recipe, the end of its output as recorded (secret values masked) — is given verbatim between two marker
 * lines, each line behind `> `, so none of the verifier's words can pass for Colony's (a recipe's output is
 * whatever the checked work printed). Then what to do, with the exact calls.
 */
const BEGIN = '----- verifier feedback (its own words, verbatim) -----';
const END = '----- end of verifier feedback -----';
const call = (tool: string, args: Record<string, unknown>): string => `${tool} ${JSON.stringify(args)}`;
const quote = (text: string): string[] => text.split(/\r\n|[\n\r\u2028\u2029]/).map((l) => `> ${l}`);

function judge(v: TaskVerified['data']): string {
  switch (v.verifierKind) {
    case 'command':
      return `its recipe${v.recipe ? ` "${v.recipe.name}"` : ''} (a command verifier; exit ${v.exitCode ?? 'none'})`;
    case 'peer':
      return `its peer verifier ${v.verifier.name} (agent)`;
    case 'owner':
      return `your owner ${v.verifier.name}`;
    case 'auto':
      return 'the automatic verifier';
    default: {
      const never: never = v.verifierKind;
      return never;
    }
  }
}

export function rejectionPrompt(task: TaskRow, v: TaskVerified['data'], scope: readonly string[]): string {
  const id = task.taskId;
  const { count, limit } = v.rejections ?? { count: 1, limit: 1 };
  const left = limit - count;
  const lines = [
    `Your hand-in of task #${id} "${task.title}" was rejected by ${judge(v)}: rejection ${count} of the ${limit} your goal sends back.`,
    `The task is yours again (claimed until ${v.returned?.leaseExpiresAt ?? 'your lease ends'}). Here is what the verifier said:`,
    '',
    BEGIN,
    ...quote(`Reason: ${v.reason}`),
    ...(v.output?.trim()
      ? [...quote(''), ...quote('Output (the end of it, secret values masked):'), ...quote(v.output)]
      : []),
    END,
    '',
    'Fix what it points out (the acceptance criteria are above), then hand the task in again:',
    `  ${call('complete_task', { task_id: id, summary: 'what you changed since the rejection' })}`,
    left > 0
      ? `${left} more rejection${left === 1 ? '' : 's'} would come back to you; the one after fails the task and goes to your owner.`
      : 'Another rejection fails the task and goes to your owner.',
    `If you cannot fix it, give it back with ${call('release_task', { task_id: id, reason: 'why' })}.`,
  ];
  const missing = ['complete_task'].filter((t) => !scope.includes(t));
  if (missing.length > 0)
    lines.push(
      '',
      `Your tool scope lacks ${missing.join(', ')}: ask the owner (send_message {"to": "owner", …}) to add it or to do this step.`,
    );
  return lines.join('\n');
}
