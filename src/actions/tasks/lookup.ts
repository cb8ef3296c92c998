import type { App } from '../../app.js';
import { DomainError } from '../../errors.js';
import type { Speaker } from '../../events/principals.js';
import { applySteps, type Steps } from '../../engine/projection-sql.js';
import { readGoal, type GoalRow } from '../../projections/goal-queries.js';
import { readAgent, readSameLineage, type AgentRow } from '../../projections/principal-queries.js';
import { readOwnerOfTask, readTask, type TaskRow } from '../../projections/task-queries.js';
import { agentIdOf } from '../goals.js';

/**
 * The facts the task commands gather: the task (visible only inside its owner's tenant), its goal, the
 * calling agent, and spawn lineage. The rules that use them are the task decider's.
 */
export interface FoundTask {
  task: TaskRow;
  /** Null for a project task. */
  goal: GoalRow | null;
  /** The owner of the task's tenant. */
  ownerId: number;
}

/** The task and its goal, if the caller's tenant owns it (Colony itself sees every tenant's). */
export function* findTask(by: Speaker, taskId: number): Steps<FoundTask> {
  const task = yield* readTask(taskId);
  const goal = task !== null && task.goalId !== null ? yield* readGoal(task.goalId) : null;
  const owner = task ? yield* readOwnerOfTask(task) : null;
  if (!task || owner === null || (owner !== by.tenant && by.key !== 'system'))
    throw new DomainError('ErrTaskNotFound', `task ${taskId} not found`, { task_id: taskId });
  return { task, goal, ownerId: owner };
}

export const taskFor = (app: App, by: Speaker, taskId: number): FoundTask =>
  applySteps(app.engine.db, findTask(by, taskId));

/** The caller as an agent; null when it is no agent (an owner, Colony) or its agent is gone. */
export function* readCallerAgent(by: Speaker): Steps<AgentRow | null> {
  const agentId = agentIdOf(by);
  return agentId === null ? null : yield* readAgent(agentId);
}

export const callerAgent = (app: App, by: Speaker): AgentRow | null => applySteps(app.engine.db, readCallerAgent(by));

/** Whether `agentId` is the task's peer verifier, or spawned it, or was spawned by it (false without a peer verifier). */
export function* readInVerifierLineage(task: TaskRow, agentId: number): Steps<boolean> {
  const v = task.verifier;
  return v.kind === 'peer' && (yield* readSameLineage(agentId, v.agent_id));
}

export const inVerifierLineage = (app: App, task: TaskRow, agentId: number): boolean =>
  applySteps(app.engine.db, readInVerifierLineage(task, agentId));
