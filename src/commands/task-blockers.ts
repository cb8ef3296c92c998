import { DomainError } from '../errors.js';
import type { DecideContext } from '../engine/decider.js';
import type { TaskEvent } from '../events/tasks.js';
import { mayChangeBlockers } from './task-access.js';
import {
  checkBlockerList,
  checkBlockerScope,
  cycleThrough,
  dependencyCycle,
  taskBlocked,
  waitingOn,
} from './task-dependencies.js';
import { note } from './task-notices.js';
import type { ClaimTask, Live, SetTaskBlockers } from './task-types.js';

/**
 * The task decider's dependency steps (rules: task-dependencies.ts): changing a task's blockers, and the
 * claim's wait for them. Pure, like the decider.
 */
const show = (id: number): string => `#${id}`;

/**
 * set_task_blockers: by the tenant's owner, the task's creator, its assignee or its goal's coordinator; not
 * on a done or cancelled task; each blocker a task of its goal (or project) other than itself, at most
 * MAX_BLOCKERS, none twice; and never closing a cycle. The same list again writes nothing.
 */
export function setBlockers(state: Live, c: SetTaskBlockers, ctx: DecideContext): TaskEvent[] {
  mayChangeBlockers(state, c);
  if (state.status === 'done' || state.status === 'cancelled')
    throw new DomainError('ErrTaskClosed', `task ${state.taskId} is ${state.status}: its blockers no longer matter`, {
      task_id: state.taskId,
      status: state.status,
    });
  checkBlockerList(state.taskId, c.blockedBy, 'blocked_by', show);
  checkBlockerScope(c.blockedBy, c.found, { goalId: state.goalId, projectId: state.projectId }, 'blocked_by');
  if (sameList(state.blockedBy, c.blockedBy)) return [];
  const cycle = cycleThrough(c.graph, state.taskId, c.blockedBy);
  if (cycle) throw dependencyCycle(cycle, show);
  const waiting = waitingOn(c.found.filter((f) => c.blockedBy.includes(f.taskId)));
  const body =
    c.blockedBy.length === 0
      ? `Task #${state.taskId} "${state.title}": no longer blocked (blockers cleared by ${c.by.name})`
      : `Task #${state.taskId} "${state.title}": blocked by ${c.blockedBy.map(show).join(', ')} (set by ${c.by.name}; ${waiting.length} not done yet)`;
  return [
    {
      type: 'TaskBlockersSet',
      data: {
        taskId: state.taskId,
        goalId: state.goalId,
        blockedBy: [...c.blockedBy],
        previous: state.blockedBy,
        by: c.by,
        notice: note(state.taskId, state.goalId, state.channelId, ctx, body, {
          event: 'TaskBlockersSet',
          blocked_by: c.blockedBy,
          previous: state.blockedBy,
          actor: c.by.name,
        }),
      },
    },
  ];
}

const sameList = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * A new claim waits until every blocker is done (a renewal by the assignee does not: it holds the task
 * already). The facts must cover the task's blockers: a claim without them would skip the wait.
 */
export function mustBeUnblocked(state: Live, c: ClaimTask): void {
  if (state.blockedBy.some((id) => !c.blockers.some((b) => b.taskId === id)))
    throw new Error('a claim on a blocked task needs its blockers as facts');
  const waiting = waitingOn(c.blockers.filter((b) => state.blockedBy.includes(b.taskId)));
  if (waiting.length > 0) throw taskBlocked(state.taskId, waiting);
}
