import { DomainError } from '../errors.js';
import { type TaskCreated, type TaskEvent } from '../events/tasks.js';
import type { Decider, DecideContext } from '../engine/decider.js';
import type { Task, TaskCommand } from './task-types.js';
import { checkCaller, mayReport, mustBeIndependent } from './task-access.js';
import { claim, expired, expiry } from './task-claims.js';
import { illegalTask, note } from './task-notices.js';
import { budgetAlerts, cancel, dispatch, recordCost, release, start, timeOut } from './task-steps.js';
import { complete, verdict } from './task-verdicts.js';
import { setBlockers } from './task-blockers.js';

export { illegalTask };

/**
 * The task decider: claims as leases, completion, verification verdicts, release, expiry, cancellation,
 * retries and spend. Facts from other streams — who the caller is, its quarantine, the goal's status, the
 * budgets, the spawn lineage — arrive in the command; the time arrives in the context.
 *
 *   proposed → approved (dispatch) → claimed → in_progress → awaiting_verification → done | failed
 *   awaiting_verification → claimed (a rejection within the goal's retry limit: back to the assignee)
 *   claimed | in_progress → approved (release, lease expiry) | timeout (the assignee's run timed out)
 *   failed | timeout → approved (dispatch: a retry);  anything but done and cancelled → cancelled
 */

function evolve(state: Task, event: TaskEvent): Task {
  if (event.type === 'TaskCreated') return createdState(event.data);
  if (state.status === 'absent') return state;
  switch (event.type) {
    case 'TaskClaimed':
      return {
        ...state,
        status: event.data.renewed ? state.status : 'claimed',
        leaseExpiresAt: event.data.leaseExpiresAt,
        assignee: {
          agentId: event.data.agentId,
          name: event.data.agentName,
          ...(event.data.configHash ? { configHash: event.data.configHash } : {}),
        },
      };
    case 'TaskStarted':
      return { ...state, status: 'in_progress' };
    case 'TaskCompleted':
      return { ...state, status: 'awaiting_verification', leaseExpiresAt: null };
    case 'TaskVerified':
      // A rejection within the goal's retry limit gives the claim back (returned): its lease is the new one.
      return {
        ...state,
        status: event.data.to,
        rejections: state.rejections + (event.data.verdict === 'reject' ? 1 : 0),
        leaseExpiresAt: event.data.returned?.leaseExpiresAt ?? state.leaseExpiresAt,
      };
    case 'TaskReleased':
    case 'ClaimExpired':
      return { ...state, status: 'approved', assignee: null, leaseExpiresAt: null };
    case 'TaskCancelled':
      return { ...state, status: 'cancelled', leaseExpiresAt: null };
    case 'TaskDispatched':
      // A new attempt: its rejections start again.
      return {
        ...state,
        status: 'approved',
        assignee: null,
        leaseExpiresAt: null,
        attempt: event.data.attempt,
        rejections: 0,
      };
    case 'TaskUpdated': {
      const { title, projectId } = event.data.changes;
      return { ...state, title: title ?? state.title, projectId: projectId ?? state.projectId };
    }
    case 'TaskBlockersSet':
      return { ...state, blockedBy: event.data.blockedBy };
    case 'TaskTimedOut':
      return { ...state, status: 'timeout', leaseExpiresAt: null };
    case 'CostRecorded':
      return state;
    case 'TaskBudgetAlertRaised':
      return { ...state, alerted: { ...state.alerted, [event.data.dimension]: true } };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function createdState(t: TaskCreated['data']): Task {
  return {
    status: t.status,
    taskId: t.taskId,
    goalId: t.goalId,
    channelId: t.channelId,
    title: t.title,
    billingCode: t.billingCode,
    verifier: t.verifier,
    assignee: null,
    leaseExpiresAt: null,
    attempt: 1,
    rejections: 0,
    budgets: t.budgets,
    alerted: { tokens: false, cents: false },
    projectId: t.projectId ?? null,
    createdBy: t.by.key,
    blockedBy: t.blockedBy ?? [],
  };
}

function create(state: Task, command: Extract<TaskCommand, { type: 'CreateTask' }>, ctx: DecideContext): TaskEvent[] {
  if (state.status !== 'absent') throw new DomainError('ErrTaskExists', `task ${command.task.taskId} already exists`);
  const t = command.task;
  const body = `Task #${t.taskId} "${t.title}": (new) → ${t.status} by ${t.by.name}`;
  const notice = note(t.taskId, t.goalId, t.channelId, ctx, body, {
    event: 'TaskCreated',
    from: null,
    to: t.status,
    actor: t.by.name,
  });
  return [{ type: 'TaskCreated', data: { ...t, notice } }];
}

function decide(command: TaskCommand, state: Task, ctx: DecideContext): TaskEvent[] {
  if (command.type === 'CreateTask') return create(state, command, ctx);
  checkCaller(command, state);
  if (state.status === 'absent') throw new DomainError('ErrTaskNotFound', 'task not found');
  switch (command.type) {
    case 'ClaimTask':
      return claim(state, command, command.agent!, ctx);
    case 'StartTask':
      return start(state, command, command.agent!, ctx);
    case 'CompleteTask':
      return complete(state, command, command.agent!, ctx);
    case 'VerifyTask':
      mustBeIndependent(state, command.as.kind === 'peer' && command.assigneeInVerifierLineage, 'verify');
      return [verdict(state, command, ctx)];
    case 'ReleaseTask':
      return release(state, command, command.agent!, ctx);
    case 'ExpireClaim':
      return expired(state, ctx.now) ? [expiry(state, ctx)] : [];
    case 'CancelTask':
      return cancel(state, command, ctx);
    case 'RecordCost':
      mayReport(state, command);
      return recordCost(state, command);
    case 'DispatchTask':
      return dispatch(state, command, ctx);
    case 'UpdateTask':
      return command.labels.length === 0
        ? []
        : [
            {
              type: 'TaskUpdated',
              data: { taskId: state.taskId, changes: command.changes, labels: command.labels, by: command.by },
            },
          ];
    case 'SetTaskBlockers':
      return setBlockers(state, command, ctx);
    case 'TimeOutTask':
      return timeOut(state, command, ctx);
    case 'ApplyTaskSpend':
      return budgetAlerts(state, command.spent, ctx);
    default: {
      const never: never = command;
      return never;
    }
  }
}

export const taskDecider: Decider<Task, TaskCommand, TaskEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
