import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';

/**
 * Which unfinished tasks a secret reaches (live names, over the tasks and runs projections): when the
 * owner revokes one, these are the tasks whose processes lose it (actions/secrets/warnings.ts). A secret
 * reaches a process as actions/secrets/env.ts hands it out: an agent run gets its agent's secrets and all of the
 * owner's user-scope ones; a command verifier gets its task's secrets and the user-scope ones its recipe
 * was granted by name. Terminal tasks (done, failed, timeout, cancelled) start nothing more.
 */
const OPEN = `status NOT IN ('done', 'failed', 'timeout', 'cancelled')`;
const WORKED = `status IN ('claimed', 'in_progress')`;
const RUN_PENDING = `status IN ('queued', 'running')`;

/** The agent's unfinished tasks: those it holds, and those it has a queued or running run for. */
export const openTasksOfAgent = (db: Database, agentId: number): number[] =>
  (
    prepared(
      db,
      `SELECT task_id AS id FROM tasks WHERE ${OPEN} AND ((assignee_agent_id = @agent AND ${WORKED})
    OR task_id IN (SELECT task_id FROM runs WHERE agent_id = @agent AND ${RUN_PENDING} AND task_id IS NOT NULL)) ORDER BY task_id`,
    ).all({ agent: agentId }) as { id: number }[]
  ).map((r) => r.id);

/**
 * The owner's unfinished tasks a user-scope secret `name` reaches: those an agent holds or has a queued
 * or running run for (runs get every user-scope secret), and those whose command verifier's recipe was
 * granted the name.
 */
export const openTasksReachedByUserSecret = (db: Database, ownerId: number, name: string): number[] =>
  (
    prepared(
      db,
      `SELECT task_id AS id FROM tasks t WHERE ${OPEN}
    AND coalesce(t.owner_id, (SELECT g.owner_id FROM goals g WHERE g.goal_id = t.goal_id)) = @owner
    AND (${WORKED}
      OR task_id IN (SELECT task_id FROM runs WHERE owner_id = @owner AND ${RUN_PENDING} AND task_id IS NOT NULL)
      OR (verifier_kind = 'command' AND EXISTS (SELECT 1 FROM json_each(t.verifier, '$.secrets') s WHERE s.value = @name)))
    ORDER BY task_id`,
    ).all({ owner: ownerId, name }) as { id: number }[]
  ).map((r) => r.id);

/** Whether the task is unfinished (a task-scope secret reaches only its own task). */
export const isOpenTask = (db: Database, taskId: number): boolean =>
  prepared(db, `SELECT 1 FROM tasks WHERE task_id = ? AND ${OPEN}`).get(taskId) !== undefined;
