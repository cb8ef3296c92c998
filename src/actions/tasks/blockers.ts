import type { App } from '../../app.js';
import { taskDecider } from '../../commands/tasks.js';
import type { CommandOptions } from '../../engine/handle.js';
import { decide, runUnit, type Unit } from '../../engine/unit-of-work.js';
import { DomainError } from '../../errors.js';
import type { Speaker } from '../../events/principals.js';
import { taskStream } from '../../events/tasks.js';
import { runningRunOf } from '../../projections/run-queries.js';
import { readBlockerFacts, readDependencyGraph } from '../../projections/task-blocker-queries.js';
import { getTask, readTask, type TaskRow } from '../../projections/task-queries.js';
import { tripBreaker } from '../breakers.js';
import { agentIdOf, who } from '../goals.js';
import { findTask } from './lookup.js';
import { log } from '../../log.js';

/**
 * set_task_blockers as a command, and what follows a refusal for a cycle. An agent whose write would close a
 * dependency cycle is caught in the loop of circular blockers that never end: the refusal also trips its
 * dependency_cycle breaker on that goal — in a transaction of its own after the refusal, so the refused
 * write stays unwritten. The owner's refused writes trip nothing.
 */
export function setTaskBlockers(
  app: App,
  by: Speaker,
  taskId: number,
  blockedBy: number[],
  actor: CommandOptions,
): TaskRow {
  const goalId = getTask(app.engine.db, taskId)?.goalId ?? null;
  tripsOnCycle(app, by, goalId, actor, () =>
    runUnit(app.engine, actor, () => setTaskBlockersUnit(by, taskId, blockedBy)),
  );
  return getTask(app.engine.db, taskId)!;
}

/** The blockers as a unit of work (engine/unit-of-work.ts), on either store: the task as it is after. */
export function* setTaskBlockersUnit(by: Speaker, taskId: number, blockedBy: number[]): Unit<TaskRow> {
  const { task, goal, ownerId } = yield* findTask(by, taskId);
  yield* decide(taskDecider, taskStream(taskId), {
    type: 'SetTaskBlockers',
    blockedBy,
    by: who(by),
    found: yield* readBlockerFacts(ownerId, blockedBy),
    graph: yield* readDependencyGraph({ goalId: task.goalId, projectId: task.projectId }),
    ownerId,
    coordinatorAgentId: goal?.coordinatorAgentId ?? null,
  });
  return (yield* readTask(taskId))!;
}

/** Runs `write`; a refusal for a cycle trips the writing agent's breaker after it (tripOnCycle), then is thrown. */
export function tripsOnCycle<T>(
  app: App,
  by: Speaker,
  goalId: number | null,
  actor: CommandOptions,
  write: () => T,
): T {
  try {
    return write();
  } catch (e) {
    tripOnCycle(app, by, goalId, e, actor);
    throw e;
  }
}

/**
 * After a write refused with ErrDependencyCycle: an agent's trips its dependency_cycle breaker for the goal
 * (null: a project's tasks), with the cycle and the run it was in as the evidence. Anything else: nothing.
 */
export function tripOnCycle(app: App, by: Speaker, goalId: number | null, e: unknown, actor: CommandOptions): void {
  const agentId = agentIdOf(by);
  if (agentId === null || !(e instanceof DomainError) || e.code !== 'ErrDependencyCycle') return;
  const cycle = (e.details?.cycle ?? []) as (number | string)[];
  const run = runningRunOf(app.engine.db, agentId);
  const shown = cycle.map((k) => (typeof k === 'number' ? `#${k}` : k)).join(' → ');
  try {
    trip(app, by, agentId, goalId, cycle, shown, run?.runId ?? null, actor);
  } catch (err) {
    // The caller gets the refusal whatever happens to the trip.
    log.warn({ err, agentId, goalId }, 'the dependency_cycle breaker did not trip');
  }
}

function trip(
  app: App,
  by: Speaker,
  agentId: number,
  goalId: number | null,
  cycle: (number | string)[],
  shown: string,
  runId: number | null,
  actor: CommandOptions,
): void {
  tripBreaker(
    app,
    {
      agentId,
      goalId,
      breaker: 'dependency_cycle',
      reason: `it tried to make tasks wait on each other in a cycle (${shown}), which would never end`,
      evidence: {
        runIds: runId === null ? [] : [runId],
        taskIds: cycle.filter((k): k is number => typeof k === 'number'),
        threshold: 1,
      },
    },
    // Its own command: the refused call's idempotency key must stay free for that call.
    { actor: actor.actor, causationId: actor.commandId ?? null, correlationId: actor.correlationId ?? null },
    by.key,
  );
}
