import type { App } from '../../app.js';
import { BudgetExceeded } from '../../commands/task-budget.js';
import type { ClaimTask } from '../../commands/task-types.js';
import { taskDecider } from '../../commands/tasks.js';
import type { CommandOptions, TransactResult } from '../../engine/handle.js';
import { decide, runUnit, type Unit } from '../../engine/unit-of-work.js';
import { DomainError } from '../../errors.js';
import type { Speaker } from '../../events/principals.js';
import { taskStream } from '../../events/tasks.js';
import { readTask } from '../../projections/task-queries.js';
import { readBlockersOf } from '../../projections/task-blocker-queries.js';
import { heldReservation, pauseForBudgetUnit, readBudgetLines } from '../budget.js';
import { who } from '../goals.js';
import { findTask, readCallerAgent, readInVerifierLineage } from './lookup.js';

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
  return claimedBy(
    runUnit(app.engine, actor, () => claimTaskUnit(by, taskId, leaseMs)),
    taskId,
  );
}

/** The claim as a unit of work (engine/unit-of-work.ts): on either store. */
export type ClaimOutcome = { refused: BudgetExceeded } | { refused: null; claimed: Claimed };

export function* claimTaskUnit(by: Speaker, taskId: number, leaseMs = DEFAULT_LEASE_MS): Unit<ClaimOutcome> {
  const { task, goal } = yield* findTask(by, taskId);
  const agent = yield* readCallerAgent(by);
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
    inVerifierLineage: agent !== null && (yield* readInVerifierLineage(task, agent.agentId)),
    budget: goal ? { lines: yield* readBudgetLines(goal, task), replaces: heldReservation(task) } : null,
    blockers: yield* readBlockersOf(task),
  };
  try {
    const handled = yield* decide(taskDecider, taskStream(taskId), command);
    const claimed = handled.events.find((e) => e.type === 'TaskClaimed')!;
    const lease = claimed.data as { leaseExpiresAt: string; renewed: boolean };
    const row = yield* readTask(taskId);
    return {
      refused: null,
      claimed: {
        taskId,
        status: 'claimed',
        claimedAt: row!.claimedAt ?? claimed.recordedAt,
        leaseExpiresAt: lease.leaseExpiresAt,
        renewed: lease.renewed,
      },
    };
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e;
    if (e.refusal.scope === 'goal') yield* pauseForBudgetUnit(goal!, e.refusal, who(by));
    return { refused: e };
  }
}

/** What claim_task answers for a unit's result: the lease, or the refusal (a retry's from the first run's events). */
export function claimedBy(result: TransactResult<ClaimOutcome>, taskId: number): Claimed {
  const v = result.value;
  if (!v) return replayedClaim(result.events, taskId);
  if (v.refused) throw v.refused;
  return v.claimed;
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
