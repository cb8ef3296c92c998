import type { App } from '../../app.js';
import type { VerifyTask } from '../../commands/task-types.js';
import { taskDecider } from '../../commands/tasks.js';
import type { CommandOptions } from '../../engine/handle.js';
import type { Speaker } from '../../events/principals.js';
import { taskStream } from '../../events/tasks.js';
import { getTask, type TaskRow } from '../../projections/task-queries.js';
import { who } from '../goals.js';
import { sendSystemDirect } from '../notifications.js';
import { recordVerdicts } from '../reputation.js';
import { inVerifierLineage, taskFor, type FoundTask } from './lookup.js';

/**
 * A verdict — from the configured peer (verify_task), the command runner or the auto verifier — and, in
 * the same command, its evidence for the assignee's reputation and, for a rejection, a DM with the task,
 * the verdict and the reason to whoever re-plans it: the goal's coordinator, or a project task's owner.
 */
export function verifyTask(
  app: App,
  by: Speaker,
  taskId: number,
  verdict: 'approve' | 'reject',
  reason: string,
  as: VerifyTask['as'],
  actor: CommandOptions,
): TaskRow {
  app.engine.transact(actor, () => {
    const found = taskFor(app, by, taskId);
    const assignee = found.task.assigneeAgentId;
    const { events } = app.engine.handle(
      taskDecider,
      taskStream(taskId),
      {
        type: 'VerifyTask',
        verdict,
        reason,
        verifier: who(by),
        as,
        assigneeInVerifierLineage: assignee !== null && inVerifierLineage(app, found.task, assignee),
      },
      actor,
    );
    recordVerdicts(app, events, actor);
    if (verdict === 'reject') tellOfRejection(app, found, reason, as, actor);
  });
  return getTask(app.engine.db, taskId)!;
}

function tellOfRejection(app: App, f: FoundTask, reason: string, as: VerifyTask['as'], actor: CommandOptions): void {
  const { task, goal } = f;
  const failed = `Task #${task.taskId} "${task.title}" failed verification (${as.kind}, verdict reject): ${reason}.${outputTail(as)}`;
  if (goal) {
    sendSystemDirect(
      app,
      goal.ownerId,
      `agent-${goal.coordinatorAgentId}`,
      `${failed} Re-plan it, or complete_goal with status "stuck".`,
      { event: 'TaskVerified', task_id: task.taskId, goal_id: goal.goalId, verdict: 'reject', reason },
      actor,
    );
  } else {
    sendSystemDirect(
      app,
      f.ownerId,
      `user-${f.ownerId}`,
      `${failed} Retry it with task_dispatch, or cancel it.`,
      { event: 'TaskVerified', task_id: task.taskId, verdict: 'reject', reason },
      actor,
    );
  }
}

/** The end of a command verifier's output, for the DM (the whole 4 KiB tail is on the task). */
function outputTail(as: VerifyTask['as']): string {
  if (as.kind !== 'command' || !as.output.trim()) return '';
  const tail = as.output.trim().slice(-500);
  return `\nOutput (end):\n${tail}\n`;
}
