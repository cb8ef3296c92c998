import { DomainError } from '../errors.js';
import { type TaskEvent } from '../events/tasks.js';
import type { Decider, DecideContext } from '../engine/decider.js';
import type { Task, TaskCommand } from './task-types.js';
import {
  budgetAlerts,
  claim,
  dispatch,
  expired,
  expiry,
  holding,
  illegalTask,
  mustHold,
  note,
  transition,
  verdict,
} from './task-steps.js';

export { illegalTask };

/**
 * The task decider: claims as leases (DESIGN §3.6), completion, verification verdicts (§3.13),
 * release, expiry, cancellation (§3.5) and spend. Facts from other streams — the caller's quarantine,
 * the goal's status — arrive in the command; the time arrives in the context.
 *
 *   proposed → approved (dispatch) → claimed → in_progress → awaiting_verification → done | failed
 *   claimed | in_progress → approved (release, lease expiry) | timeout (the assignee's run timed out)
 *   failed | timeout → approved (dispatch: a retry);  anything but done and cancelled → cancelled
 */

function evolve(state: Task, event: TaskEvent): Task {
  if (event.type === 'TaskCreated') {
    const t = event.data;
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
      budgets: t.budgets,
      alerted: { tokens: false, cents: false },
    };
  }
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
      return { ...state, status: event.data.to };
    case 'TaskReleased':
    case 'ClaimExpired':
      return { ...state, status: 'approved', assignee: null, leaseExpiresAt: null };
    case 'TaskCancelled':
      return { ...state, status: 'cancelled', leaseExpiresAt: null };
    case 'TaskDispatched':
      return { ...state, status: 'approved', assignee: null, leaseExpiresAt: null, attempt: event.data.attempt };
    case 'TaskUpdated':
      return event.data.changes.title === undefined ? state : { ...state, title: event.data.changes.title };
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

function decide(command: TaskCommand, state: Task, ctx: DecideContext): TaskEvent[] {
  if (command.type === 'CreateTask') {
    if (state.status !== 'absent') throw new DomainError('ErrTaskExists', `task ${command.task.taskId} already exists`);
    const t = command.task;
    const body = `Task #${t.taskId} "${t.title}": (new) → ${t.status} by ${t.by.name}`;
    return [
      {
        type: 'TaskCreated',
        data: {
          ...t,
          notice: note(t.taskId, t.goalId, t.channelId, ctx, body, {
            event: 'TaskCreated',
            from: null,
            to: t.status,
            actor: t.by.name,
          }),
        },
      },
    ];
  }
  if (command.type === 'ClaimTask' && command.agent.quarantined) {
    throw new DomainError('ErrAgentQuarantined', `agent ${command.agent.name} is quarantined and may not claim tasks`, {
      agent: command.agent.name,
    });
  }
  if (state.status === 'absent') throw new DomainError('ErrTaskNotFound', 'task not found');
  switch (command.type) {
    case 'ClaimTask':
      return claim(state, command, ctx);
    case 'StartTask':
      mustHold(state, command.agent, ctx.now);
      if (state.status !== 'claimed') return [];
      return [
        {
          type: 'TaskStarted',
          data: {
            taskId: state.taskId,
            agentId: command.agent.agentId,
            from: 'claimed',
            notice: transition(state, ctx, 'in_progress', command.agent.name),
          },
        },
      ];
    case 'CompleteTask': {
      mustHold(state, command.agent, ctx.now);
      const from = state.status as 'claimed' | 'in_progress';
      const completed: TaskEvent = {
        type: 'TaskCompleted',
        data: {
          taskId: state.taskId,
          agentId: command.agent.agentId,
          summary: command.summary,
          artifactMessageIds: command.artifactMessageIds,
          from,
          notice: transition(state, ctx, 'awaiting_verification', command.agent.name, { summary: command.summary }),
        },
      };
      if (state.verifier.kind !== 'auto') return [completed];
      const after = { ...state, status: 'awaiting_verification' as const };
      return [
        completed,
        verdict(
          after,
          {
            type: 'VerifyTask',
            verdict: 'approve',
            reason: 'auto-approved: no verifier configured',
            verifier: { key: 'system', name: 'system' },
            as: { kind: 'auto' },
          },
          ctx,
        ),
      ];
    }
    case 'VerifyTask':
      return [verdict(state, command, ctx)];
    case 'ReleaseTask':
      mustHold(state, command.agent, ctx.now);
      return [
        {
          type: 'TaskReleased',
          data: {
            taskId: state.taskId,
            agentId: command.agent.agentId,
            reason: command.reason,
            from: state.status,
            notice: transition(state, ctx, 'approved', command.agent.name, {
              reason: command.reason,
              event: 'TaskReleased',
            }),
          },
        },
      ];
    case 'ExpireClaim':
      return expired(state, ctx.now) ? [expiry(state, ctx)] : [];
    case 'CancelTask':
      if (state.status === 'done' || state.status === 'cancelled') throw illegalTask(state.status, 'cancelled');
      return [
        {
          type: 'TaskCancelled',
          data: {
            taskId: state.taskId,
            reason: command.reason,
            from: state.status,
            by: command.by,
            notice: transition(state, ctx, 'cancelled', command.by.name, { reason: command.reason }),
          },
        },
      ];
    case 'RecordCost':
      return [
        {
          type: 'CostRecorded',
          data: {
            taskId: state.taskId,
            goalId: state.goalId,
            by: command.by,
            tokens: command.tokens,
            cents: command.cents,
            note: command.note,
            source: command.source,
            ...(command.runId === undefined ? {} : { runId: command.runId }),
          },
        },
      ];
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
    case 'TimeOutTask':
      if (!holding(state) || state.assignee?.agentId !== command.agentId) return [];
      return [
        {
          type: 'TaskTimedOut',
          data: {
            taskId: state.taskId,
            agentId: command.agentId,
            runId: command.runId,
            reason: command.reason,
            from: state.status,
            notice: transition(state, ctx, 'timeout', 'system', { reason: command.reason, run_id: command.runId }),
          },
        },
      ];
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
