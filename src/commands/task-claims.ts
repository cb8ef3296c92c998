import { DomainError } from '../errors.js';
import type { TaskEvent } from '../events/tasks.js';
import type { DecideContext } from '../engine/decider.js';
import type { AgentRef } from '../events/principals.js';
import { BudgetExceeded, budgetRefusal } from './task-budget.js';
import { transition } from './task-notices.js';
import { mustBeUnblocked } from './task-blockers.js';
import type { ClaimTask, Live } from './task-types.js';

/**
 * Claims are leases: a claim holds the task until its lease runs out; the assignee renews it by claiming
 * again, and anyone may claim a task whose lease ran out (the old lease expires in the same command).
 * Only the assignee, while its lease lasts, moves a held task on. Pure, like the decider.
 */
export const holding = (s: Live): boolean => s.status === 'claimed' || s.status === 'in_progress';
export const expired = (s: Live, now: string): boolean =>
  holding(s) && s.leaseExpiresAt !== null && Date.parse(s.leaseExpiresAt) <= Date.parse(now);

type Claimer = NonNullable<ClaimTask['agent']>;

/**
 * A claim, in this order: a renewal by the assignee; refused while another agent's lease lasts, on a
 * closed goal, on a paused one, on a task that is not approved (once an expired lease is let go), on one
 * whose blockers are not all done (ErrTaskBlocked); then the budget gate — the reservation must fit in the goal's budget and each budgeted task's above it.
 */
export function claim(state: Live, c: ClaimTask, agent: Claimer, ctx: DecideContext): TaskEvent[] {
  const leaseExpiresAt = new Date(Date.parse(ctx.now) + c.leaseMs).toISOString();
  const base = {
    taskId: state.taskId,
    agentId: agent.agentId,
    agentName: agent.name,
    leaseExpiresAt,
    reservation: c.reservation,
  };
  const hashed = (hash: string | undefined) => (hash ? { configHash: hash } : {});
  const live = holding(state) && !expired(state, ctx.now);
  if (live && state.assignee?.agentId === agent.agentId) {
    // A renewal keeps the config the work started under.
    return [
      {
        type: 'TaskClaimed',
        data: { ...base, ...hashed(state.assignee.configHash), renewed: true, from: state.status, notice: null },
      },
    ];
  }
  if (live)
    throw new DomainError('ErrAlreadyClaimed', `task already claimed by another agent (${state.assignee?.name})`, {
      task_id: state.taskId,
      assignee: state.assignee?.name,
    });
  checkGoalOpen(state, c.goalStatus);
  const events: TaskEvent[] = [];
  let current: Live = state;
  if (holding(state)) {
    events.push(expiry(state, ctx));
    current = { ...state, status: 'approved', assignee: null, leaseExpiresAt: null };
  }
  if (current.status !== 'approved') {
    throw new DomainError('ErrTaskNotApproved', `task ${state.taskId} is ${current.status}, not approved`, {
      task_id: state.taskId,
      status: current.status,
    });
  }
  mustBeUnblocked(current, c);
  // A goal's task without its budget facts would skip the gate: a caller's bug, never a pass.
  if ((c.goalStatus === null) !== (c.budget === null)) throw new Error('a claim on a goal task needs its budget facts');
  const refusal = c.budget ? budgetRefusal(c.budget.lines, c.reservation, c.budget.replaces) : null;
  if (refusal) throw new BudgetExceeded(refusal);
  events.push({
    type: 'TaskClaimed',
    data: {
      ...base,
      ...hashed(agent.configHash),
      renewed: false,
      from: 'approved',
      notice: transition(current, ctx, 'claimed', agent.name, { lease_expires_at: leaseExpiresAt }),
    },
  });
  return events;
}

/** A closed goal's tasks take no new claims; a paused goal's neither, until the owner resumes it. */
function checkGoalOpen(state: Live, goalStatus: string | null): void {
  if (goalStatus === 'completed' || goalStatus === 'cancelled') {
    throw new DomainError(
      'ErrGoalClosed',
      `the goal of task ${state.taskId} is ${goalStatus}: its tasks take no new claims`,
      { goal_id: state.goalId },
    );
  }
  if (goalStatus === 'paused')
    throw new DomainError(
      'ErrGoalBudgetExceeded',
      'the goal is paused: no new work starts until the owner resumes it',
      { goal_id: state.goalId },
    );
}

export function expiry(state: Live, ctx: DecideContext): TaskEvent {
  return {
    type: 'ClaimExpired',
    data: {
      taskId: state.taskId,
      agentId: state.assignee!.agentId,
      leaseExpiresAt: state.leaseExpiresAt!,
      from: state.status,
      notice: transition(state, ctx, 'approved', 'system', {
        event: 'ClaimExpired',
        reason: `lease of ${state.assignee!.name} expired`,
        previous_assignee: state.assignee!.name,
      }),
    },
  };
}

/** Only the assignee, while its lease lasts, moves a held task on. */
export function mustHold(state: Live, agent: AgentRef, now: string): void {
  if (!holding(state) || state.assignee?.agentId !== agent.agentId) {
    throw new DomainError(
      'ErrNotAssignee',
      `task ${state.taskId} is ${state.status}${state.assignee ? ` and assigned to ${state.assignee.name}` : ''}; only its assignee can do this while it is claimed`,
      { task_id: state.taskId, status: state.status },
    );
  }
  if (expired(state, now)) {
    throw new DomainError(
      'ErrLeaseExpired',
      `your claim on task ${state.taskId} expired at ${state.leaseExpiresAt}: claim it again`,
      { task_id: state.taskId, lease_expires_at: state.leaseExpiresAt },
    );
  }
}
