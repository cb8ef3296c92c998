import type { App } from '../../app.js';
import { DomainError } from '../../errors.js';
import type { Speaker } from '../../events/principals.js';
import { getGoal, type GoalRow } from '../../projections/goal-queries.js';
import { getAgent, sameLineage, type AgentRow } from '../../projections/principal-queries.js';
import { getTask, ownerOfTask, type TaskRow } from '../../projections/task-queries.js';
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
export function taskFor(app: App, by: Speaker, taskId: number): FoundTask {
  const task = getTask(app.engine.db, taskId);
  const goal = task !== null && task.goalId !== null ? getGoal(app.engine.db, task.goalId) : null;
  const owner = task ? ownerOfTask(app.engine.db, task) : null;
  if (!task || owner === null || (owner !== by.tenant && by.key !== 'system'))
    throw new DomainError('ErrTaskNotFound', `task ${taskId} not found`, { task_id: taskId });
  return { task, goal, ownerId: owner };
}

/** The caller as an agent; null when it is no agent (an owner, Colony) or its agent is gone. */
export function callerAgent(app: App, by: Speaker): AgentRow | null {
  const agentId = agentIdOf(by);
  return agentId === null ? null : getAgent(app.engine.db, agentId);
}

/** Whether `agentId` is the task's peer verifier, or spawned it, or was spawned by it (false without a peer verifier). */
export function inVerifierLineage(app: App, task: TaskRow, agentId: number): boolean {
  const v = task.verifier;
  return v.kind === 'peer' && sameLineage(app.engine.db, agentId, v.agent_id);
}
