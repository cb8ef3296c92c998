import type { App } from '../app.js';
import type { WakeRequest } from '../actions/runs.js';
import { sendSystemDirect } from '../actions/notifications.js';
import { goalStallSec } from '../config.js';
import { log } from '../log.js';
import { dmName } from '../events/channels.js';
import { getChannelByName } from '../projections/channel-queries.js';
import { idleDraftGoals, ownerToldOfGoal, type DraftGoal } from '../projections/sweep-queries.js';
import { goalRunWokenBy } from '../projections/wake-queries.js';

/**
 * No goal waits on nobody in silence. A goal still `draft` with no task tree proposed and nothing of
 * Colony's queued or running for it, for COLONY_GOAL_STALL_SEC (default 120 s) since anything last ran for
 * it, re-wakes its coordinator once (wake source `goal_stalled`, a prompt that says what is missing); if it
 * is still so another stall later — or at once when that re-wake was refused, or when Colony does not run
 * the coordinator at all — its owner gets one system DM naming the goal, the coordinator and why. Both are
 * read back from the log (the re-wake is a run's wake, the DM a message), so a restart repeats neither.
 */
export const STALL_EVENT = 'GoalStalled';
/** The stall time in ms (COLONY_GOAL_STALL_SEC, 120 s by default; a bad value is refused naming the variable). */
export const goalStallMs = (env: NodeJS.ProcessEnv = process.env): number => goalStallSec(env) * 1000;

export interface StallSteps {
  wakes: WakeRequest[];
  tell: { goal: DraftGoal; why: string }[];
}

/** What is due at `now` (ms): coordinators to re-wake, owners to tell. Pure reads; the reactor acts on them. */
export function dueGoalStalls(app: App, now: number, stallMs: number): StallSteps {
  const db = app.engine.db;
  const steps: StallSteps = { wakes: [], tell: [] };
  for (const goal of idleDraftGoals(db, new Date(now - stallMs).toISOString())) {
    const idleMs = now - Date.parse(goal.lastActivity);
    const dm = getChannelByName(db, goal.ownerId, dmName('system', `user-${goal.ownerId}`));
    if (ownerToldOfGoal(db, dm?.channelId ?? null, STALL_EVENT, goal.goalId)) continue;
    const minutes = Math.max(1, Math.round((now - Date.parse(goal.createdAt)) / 60_000));
    if (!goal.runnable) {
      if (idleMs >= stallMs)
        steps.tell.push({
          goal,
          why: `Colony does not run its coordinator ${goal.coordinatorName} (no agent command: an outside MCP client holding its token is expected, and none has proposed a tree in ${minutes} min)`,
        });
      continue;
    }
    const rewake = goalRunWokenBy(db, goal.goalId, 'goal_stalled');
    if (rewake === null) {
      if (idleMs >= stallMs) steps.wakes.push(wakeOf(goal, minutes));
    } else if (rewake.status === 'refused') {
      steps.tell.push({
        goal,
        why: `its coordinator ${goal.coordinatorName} could not be woken again: ${rewake.reason ?? 'refused'}`,
      });
    } else if (idleMs >= stallMs) {
      steps.tell.push({
        goal,
        why: `its coordinator ${goal.coordinatorName} was woken again (run #${rewake.runId}, ${rewake.status}) and still proposed no task tree`,
      });
    }
  }
  return steps;
}

function wakeOf(goal: DraftGoal, minutes: number): WakeRequest {
  return {
    agentId: goal.coordinatorAgentId,
    source: 'goal_stalled',
    goalId: goal.goalId,
    by: 'system',
    prompt: `Goal #${goal.goalId} has been in draft for ${minutes} min and no task tree was proposed for it. Propose its task tree now (propose_task_tree), or close it as stuck with the reason (complete_goal with status stuck). Its owner is told if it stays so.`,
  };
}

/** The owner's one DM about a stalled goal. */
export function tellOwnerOfStall(app: App, step: StallSteps['tell'][number]): void {
  const { goal, why } = step;
  sendSystemDirect(
    app,
    goal.ownerId,
    `user-${goal.ownerId}`,
    `Goal #${goal.goalId} "${goal.title}" is waiting in draft with no task tree: ${why}. See its coordinator's runs (colony runs list --agent ${goal.coordinatorName}), propose a tree yourself, or cancel the goal.`,
    { event: STALL_EVENT, goal_id: goal.goalId },
    { actor: 'system' },
  );
}

/** The reactor's part: every sweep, at most every tenth of a stall (5 s at most), what is due is done. */
export class StallWatch {
  private seenAt = -Infinity;
  private readonly stallMs: number;

  constructor(
    private readonly app: App,
    stallMs?: number,
  ) {
    this.stallMs = stallMs ?? goalStallMs();
  }

  sweep(now: number, wake: (w: WakeRequest) => void): void {
    if (now - this.seenAt < Math.min(5_000, this.stallMs / 10)) return;
    this.seenAt = now;
    const due = dueGoalStalls(this.app, now, this.stallMs);
    for (const w of due.wakes) wake(w);
    for (const step of due.tell) {
      try {
        tellOwnerOfStall(this.app, step);
      } catch (err) {
        log.warn({ err, goalId: step.goal.goalId }, 'could not tell the owner of a stalled goal');
      }
    }
  }
}
