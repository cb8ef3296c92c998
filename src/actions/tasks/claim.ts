import type { App } from '../../app.js';
import { BudgetExceeded } from '../../commands/task-budget.js';
import type { ClaimTask } from '../../commands/task-types.js';
import { taskDecider } from '../../commands/tasks.js';
import type { CommandOptions } from '../../engine/handle.js';
import { DomainError } from '../../errors.js';
import type { Speaker } from '../../events/principals.js';
import { taskStream } from '../../events/tasks.js';
import { getTask } from '../../projections/task-queries.js';
import { budgetLines, heldReservation, pauseForBudget } from '../budget.js';
import { who } from '../goals.js';
import { callerAgent, inVerifierLineage, taskFor } from './lookup.js';

export const DEFAULT_LEASE_MS = 30 * 60_000;

export interface Claimed {
  taskId: number;
  status: string;
  claimedAt: string;
  leaseExpiresAt: string;
  renewed: boolean;
}

/**
 * claim_task: a lease on an approved task (or a renewal by its assignee), decided by the task decider
 * from the facts read here. A claim its budget gate refuses for the goal's budget pauses the goal: the
 * pause is committed, although the claim is not, and the caller gets the refusal.
 */
export function claimTask(
  app: App,
  by: Speaker,
  taskId: number,
  actor: CommandOptions,
  leaseMs = DEFAULT_LEASE_MS,
): Claimed {
  const result = app.engine.transact(actor, () => {
    const { task, goal } = taskFor(app, by, taskId);
    const agent = callerAgent(app, by);
    const command: ClaimTask = {
      type: 'ClaimTask',
      agent: agent && {
        agentId: agent.agentId,
        name: agent.name,
        quarantined: agent.quarantined,
        configHash: agent.configHash,
      },
      leaseMs,
      reservation: { tokens: 0, cents: task.heartbeat?.max_budget ?? 0 },
      goalStatus: goal?.status ?? null,
      inVerifierLineage: agent !== null && inVerifierLineage(app, task, agent.agentId),
      budget: goal ? { lines: budgetLines(app, goal, task), replaces: heldReservation(task) } : null,
    };
    try {
      const handled = app.engine.handle(taskDecider, taskStream(taskId), command, actor);
      const claimed = handled.events.find((e) => e.type === 'TaskClaimed')!;
      return {
        refused: null,
        claimed: claimed.data as { leaseExpiresAt: string; renewed: boolean },
        at: claimed.recordedAt,
      };
    } catch (e) {
      if (!(e instanceof BudgetExceeded)) throw e;
      if (e.refusal.scope === 'goal') pauseForBudget(app, goal!, e.refusal, who(by), actor);
      return { refused: e };
    }
  });
  const v = result.value;
  if (!v) return replayedClaim(result.events, taskId);
  if (v.refused) throw v.refused;
  return {
    taskId,
    status: 'claimed',
    claimedAt: getTask(app.engine.db, taskId)!.claimedAt ?? v.at!,
    leaseExpiresAt: v.claimed!.leaseExpiresAt,
    renewed: v.claimed!.renewed,
  };
}

/** A retried claim (same idempotency key) answers as the first one did: its lease, or its budget refusal. */
function replayedClaim(
  events: readonly { type: string; data: unknown; recordedAt: string }[],
  taskId: number,
): Claimed {
  const e = events.find((x) => x.type === 'TaskClaimed');
  if (!e)
    throw new DomainError('ErrGoalBudgetExceeded', 'this claim was refused for budget when it first ran', {
      task_id: taskId,
    });
  const d = e.data as { leaseExpiresAt: string; renewed: boolean };
  return { taskId, status: 'claimed', claimedAt: e.recordedAt, leaseExpiresAt: d.leaseExpiresAt, renewed: d.renewed };
}
