import type { Amount, TaskEvent } from '../events/tasks.js';
import type { DecideContext } from '../engine/decider.js';
import type { AgentRef } from '../events/principals.js';
import { holding, mustHold } from './task-claims.js';
import { illegalTask, note, transition } from './task-notices.js';
import type { CancelTask, DispatchTask, Live, RecordCost, ReleaseTask, StartTask, TimeOutTask } from './task-types.js';

/**
 * The task decider's other steps (commands/tasks.ts decides which runs): starting, releasing,
 * cancelling, dispatching (a retry), a run's timeout, spend and the task budget's alert. Pure, like the decider.
 */
export function start(state: Live, c: StartTask, agent: AgentRef, ctx: DecideContext): TaskEvent[] {
  // A run starting moves on only a task its agent holds and has not started: any other is none of its business.
  if (c.byRun && (state.status !== 'claimed' || state.assignee?.agentId !== agent.agentId)) return [];
  mustHold(state, agent, ctx.now);
  if (state.status !== 'claimed') return [];
  return [
    {
      type: 'TaskStarted',
      data: {
        taskId: state.taskId,
        agentId: agent.agentId,
        from: 'claimed',
        notice: transition(state, ctx, 'in_progress', agent.name),
      },
    },
  ];
}

export function release(state: Live, c: ReleaseTask, agent: AgentRef, ctx: DecideContext): TaskEvent[] {
  mustHold(state, agent, ctx.now);
  return [
    {
      type: 'TaskReleased',
      data: {
        taskId: state.taskId,
        agentId: agent.agentId,
        reason: c.reason,
        from: state.status,
        notice: transition(state, ctx, 'approved', agent.name, { reason: c.reason, event: 'TaskReleased' }),
      },
    },
  ];
}

/** Anything but a done or cancelled task may be cancelled. */
export function cancel(state: Live, c: CancelTask, ctx: DecideContext): TaskEvent[] {
  if (state.status === 'done' || state.status === 'cancelled') throw illegalTask(state.status, 'cancelled');
  return [
    {
      type: 'TaskCancelled',
      data: {
        taskId: state.taskId,
        reason: c.reason,
        from: state.status,
        by: c.by,
        notice: transition(state, ctx, 'cancelled', c.by.name, { reason: c.reason }),
      },
    },
  ];
}

/**
 * Spend is a fact, recorded on a task in any status. Usage nobody reports — a run's own, which Colony
 * records when the run ends — is recorded only when the run spent something.
 */
export function recordCost(state: Live, c: RecordCost): TaskEvent[] {
  if (!c.reporter && !(c.tokens > 0 || c.cents > 0)) return [];
  return [
    {
      type: 'CostRecorded',
      data: {
        taskId: state.taskId,
        goalId: state.goalId,
        by: c.by,
        tokens: c.tokens,
        cents: c.cents,
        note: c.note,
        source: c.source,
        ...(c.runId === undefined ? {} : { runId: c.runId }),
      },
    },
  ];
}

/** proposed, failed or timeout → approved; already approved is a no-op (nothing written); anything else is refused. */
export function dispatch(state: Live, c: DispatchTask, ctx: DecideContext): TaskEvent[] {
  if (state.status === 'approved') return [];
  if (state.status !== 'proposed' && state.status !== 'failed' && state.status !== 'timeout')
    throw illegalTask(state.status, 'approved');
  const attempt = state.status === 'proposed' ? state.attempt : state.attempt + 1;
  return [
    {
      type: 'TaskDispatched',
      data: {
        taskId: state.taskId,
        from: state.status,
        attempt,
        by: c.by,
        notice: transition(state, ctx, 'approved', c.by.name, { event: 'TaskDispatched', attempt }),
      },
    },
  ];
}

/** The assignee's run timed out: the task it held times out too (task_dispatch retries it); any other task is left alone. */
export function timeOut(state: Live, c: TimeOutTask, ctx: DecideContext): TaskEvent[] {
  if (!holding(state) || state.assignee?.agentId !== c.agentId) return [];
  return [
    {
      type: 'TaskTimedOut',
      data: {
        taskId: state.taskId,
        agentId: c.agentId,
        runId: c.runId,
        reason: c.reason,
        from: state.status,
        notice: transition(state, ctx, 'timeout', 'system', { reason: c.reason, run_id: c.runId }),
      },
    },
  ];
}

const UNIT = { tokens: 'tokens', cents: '¢' } as const;

/**
 * A task's budget caps its subtree: when the subtree has spent 80 % of it, the task raises one soft alert
 * per dimension. No pause: only the goal's budget pauses work.
 */
export function budgetAlerts(state: Live, spent: Amount, ctx: DecideContext): TaskEvent[] {
  const events: TaskEvent[] = [];
  for (const dimension of ['tokens', 'cents'] as const) {
    const budget = state.budgets[dimension];
    const used = spent[dimension];
    if (budget === null || budget <= 0 || state.alerted[dimension] || used * 10 < budget * 8) continue;
    const percent = Math.floor((used / budget) * 100);
    const body = `⚠️ Budget soft alert: task #${state.taskId} "${state.title}" has used ${percent}% of its ${dimension} budget (${used} of ${budget} ${UNIT[dimension]})`;
    events.push({
      type: 'TaskBudgetAlertRaised',
      data: {
        taskId: state.taskId,
        goalId: state.goalId,
        dimension,
        spent: used,
        budget,
        percent,
        notice: note(state.taskId, state.goalId, state.channelId, ctx, body, {
          event: 'TaskBudgetAlertRaised',
          dimension,
          spent: used,
          budget,
          percent,
        }),
      },
    });
  }
  return events;
}
