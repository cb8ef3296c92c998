import { DomainError } from '../errors.js';
import type { Notice } from '../events/notices.js';
import type { TaskStatus } from '../events/task-status.js';
import type { DecideContext } from '../engine/decider.js';
import type { Live } from './task-types.js';

/** The channel notice every task transition carries, and the refusal of a transition the life cycle does not have. */
export function transition(
  state: Live,
  ctx: DecideContext,
  to: TaskStatus,
  actor: string,
  extra: Record<string, unknown> = {},
): Notice {
  const reason = typeof extra.reason === 'string' ? ` — ${extra.reason}` : '';
  const body = `Task #${state.taskId} "${state.title}": ${state.status} → ${to} by ${actor}${reason}`;
  return note(state.taskId, state.goalId, state.channelId, ctx, body, {
    event: 'TaskTransition',
    from: state.status,
    to,
    actor,
    ...extra,
  });
}

export function note(
  taskId: number,
  goalId: number | null,
  channelId: number,
  ctx: DecideContext,
  body: string,
  metadata: Record<string, unknown>,
): Notice {
  return {
    messageId: ctx.ids.next('message'),
    channelId,
    body,
    metadata: { kind: 'system', goal_id: goalId, task_id: taskId, ...metadata },
  };
}

export const illegalTask = (from: string, to: string): DomainError =>
  new DomainError('ErrIllegalTransition', `illegal task status transition: ${from} → ${to}`, { from, to });
