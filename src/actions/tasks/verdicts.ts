import type { App } from '../../app.js';
import type { VerifyTask } from '../../commands/task-types.js';
import { taskDecider } from '../../commands/tasks.js';
import type { CommandOptions } from '../../engine/handle.js';
import type { Speaker } from '../../events/principals.js';
import { taskStream, type TaskVerified } from '../../events/tasks.js';
import type { GoalRow } from '../../projections/goal-queries.js';
import { getAgent } from '../../projections/principal-queries.js';
import { getTask, type TaskRow } from '../../projections/task-queries.js';
import { who } from '../goals.js';
import { sendSystemDirect } from '../notifications.js';
import { recordVerdicts } from '../reputation.js';
import { DEFAULT_LEASE_MS } from './claim.js';
import { inVerifierLineage, taskFor, type FoundTask } from './lookup.js';

/**
 * A verdict — from the configured peer (verify_task), the command runner, the auto verifier or the owner —
 * and, in the same command, its evidence for the assignee's reputation and who is told. A rejection within
 * the goal's retry limit goes back to the assignee (the runtime wakes it with the feedback; an agent Colony
 * does not run gets it by DM). A rejection that fails the task goes, as a DM with the task, the verdict and
 * the reason, to whoever re-plans it — the goal's coordinator, or a project task's owner — and, when it
 * used up the goal's retries, to the goal's owner too.
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
        // The owner's verdict is checked against the task's own tenant, whatever the caller claimed.
        as: as.kind === 'owner' ? { kind: 'owner', ownerId: found.ownerId } : as,
        assigneeInVerifierLineage: assignee !== null && inVerifierLineage(app, found.task, assignee),
        retry: retryOf(found.goal, found.task),
      },
      actor,
    );
    recordVerdicts(app, events, actor);
    const v = events.find((e) => e.type === 'TaskVerified')?.data as TaskVerified['data'] | undefined;
    if (v?.verdict === 'reject') tellOfRejection(app, found, v, actor);
  });
  return getTask(app.engine.db, taskId)!;
}

/** A goal's retry limit and the claim the assignee gets back; none for a project task or a goal from before the loop. */
function retryOf(goal: GoalRow | null, task: TaskRow): VerifyTask['retry'] {
  if (goal === null || goal.maxRejections === null) return null;
  return {
    limit: goal.maxRejections,
    leaseMs: DEFAULT_LEASE_MS,
    reservation: { tokens: 0, cents: task.heartbeat?.max_budget ?? 0 },
  };
}

function tellOfRejection(app: App, f: FoundTask, v: TaskVerified['data'], actor: CommandOptions): void {
  const { task, goal } = f;
  const facts = { event: 'TaskVerified', task_id: task.taskId, verdict: 'reject', reason: v.reason };
  if (v.returned) return tellAssignee(app, f, v, actor);
  const failed = `Task #${task.taskId} "${task.title}" failed verification (${v.verifierKind}, verdict reject): ${v.reason}.${outputTail(v)}`;
  if (!goal) {
    sendSystemDirect(
      app,
      f.ownerId,
      `user-${f.ownerId}`,
      `${failed} Retry it with task_dispatch, or cancel it.`,
      facts,
      actor,
    );
    return;
  }
  const inGoal = { ...facts, goal_id: goal.goalId };
  sendSystemDirect(
    app,
    goal.ownerId,
    `agent-${goal.coordinatorAgentId}`,
    `${failed} Re-plan it, or complete_goal with status "stuck".`,
    inGoal,
    actor,
  );
  if (!v.rejections) return;
  const times = v.rejections.count === 1 ? 'once' : `${v.rejections.count} times`;
  sendSystemDirect(
    app,
    goal.ownerId,
    `user-${goal.ownerId}`,
    `${failed} It was rejected ${times} (goal #${goal.goalId} sends a rejected hand-in back ${v.rejections.limit} time${v.rejections.limit === 1 ? '' : 's'} at most), so it is yours to decide: retry it as a new attempt (task_dispatch, or POST /api/tasks/${task.taskId}/retry), cancel it, or close the goal as stuck.`,
    { ...inGoal, rejections: v.rejections.count, max_rejections: v.rejections.limit },
    actor,
  );
}

/** An assignee Colony runs hears of the rejection in its next wake-up; one it does not run, by DM. */
function tellAssignee(app: App, f: FoundTask, v: TaskVerified['data'], actor: CommandOptions): void {
  const agent = getAgent(app.engine.db, v.returned!.agentId);
  if (!agent || agent.runnable) return;
  sendSystemDirect(
    app,
    f.ownerId,
    `agent-${agent.agentId}`,
    `Your hand-in of task #${f.task.taskId} "${f.task.title}" was rejected by its verifier (${v.verifierKind}: ${v.verifier.name}); it is yours again, claimed until ${v.returned!.leaseExpiresAt}. The verifier's words: ${v.reason}.${outputTail(v)} Fix what it says and hand it in again with complete_task.`,
    { event: 'TaskVerified', task_id: f.task.taskId, goal_id: f.task.goalId, verdict: 'reject', returned: true },
    actor,
  );
}

/** The end of a command verifier's output, for the DM (the whole 4 KiB tail is on the task). */
function outputTail(v: TaskVerified['data']): string {
  if (v.verifierKind !== 'command' || !v.output?.trim()) return '';
  const tail = v.output.trim().slice(-500);
  return `\nOutput (end):\n${tail}\n`;
}
