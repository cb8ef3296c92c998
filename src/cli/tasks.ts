import type { Command } from 'commander';
import { withOwner } from './owner.js';
import { action, CliError, printJson } from './shared.js';
import { positiveInt } from './goals.js';
import { oneLine } from '../terminal.js';

/**
 * `colony tasks verify ID --approve|--reject --reason TEXT`: the owner's verdict on a task awaiting
 * verification (verify_task with the owner's token) — how a leaf of a goal that requires evidence, handed
 * in with no other verifier, is decided. A rejection is the feedback: within the goal's max_rejections the
 * task goes back to its assignee, woken with these words; past it the task fails.
 */
export function registerTasks(program: Command): void {
  const tasks = program.command('tasks').description("the owner's verdicts on tasks");
  tasks
    .command('verify <id>')
    .description('approve or reject a task awaiting verification, as its owner')
    .option('--approve', 'the work is done: the task becomes done')
    .option('--reject', 'the work is not done: back to its assignee with your reason (or failed past the retry limit)')
    .option('--reason <text>', 'why (required with --reject: the assignee reads it)')
    .option('--json', 'print {"task_id","status","verdict","rejections"}')
    .action(
      action(
        (id: string, opts: { approve?: boolean; reject?: boolean; reason?: string; json?: boolean }, cmd: Command) => {
          const taskId = positiveInt(id, 'task id');
          if (!opts.approve === !opts.reject) throw new CliError('give exactly one of --approve or --reject');
          const reason = opts.reason?.trim() ?? '';
          if (opts.reject && reason.length < 3)
            throw new CliError('--reject needs --reason (at least 3 characters): the assignee reads it');
          if (reason.length > 4000) throw new CliError('--reason is at most 4000 characters');
          const verdict = opts.approve ? 'approve' : 'reject';
          return withOwner(cmd, async (app, owner) => {
            const { verifyTask } = await import('../actions/tasks.js');
            const by = { key: `user-${owner.userId}`, name: owner.name, tenant: owner.userId };
            const t = verifyTask(
              app,
              by,
              taskId,
              verdict,
              reason || 'approved by owner',
              { kind: 'owner', ownerId: owner.userId },
              {
                actor: `user:${owner.name}`,
              },
            );
            if (opts.json) return printJson({ task_id: t.taskId, status: t.status, verdict, rejections: t.rejections });
            const back =
              t.status === 'claimed' ? ` — back to ${t.assigneeName ?? 'its assignee'} with your reason` : '';
            process.stdout.write(`Task ${t.taskId} "${oneLine(t.title)}": ${verdict} → ${t.status}${back}\n`);
          });
        },
      ),
    );
}
