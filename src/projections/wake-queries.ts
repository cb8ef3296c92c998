import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { WakeSource } from '../events/runs.js';

/**
 * Reads the reactor's task wake-ups need (runtime/task-wakes.ts; live names): a parent's children, the
 * agents that work in a project, and whether a task (or a goal) already had a wake-up of some source — the runs
 * projection keeps every wake-up, queued, merged or refused, so "once per task" survives restarts.
 */
export interface ChildRow {
  taskId: number;
  title: string;
  status: string;
  summary: string | null;
  assigneeName: string | null;
  artifactMessageIds: number[];
}

export const childrenOf = (db: Database, parentId: number): ChildRow[] =>
  (
    prepared(
      db,
      `SELECT task_id AS taskId, title, status, summary, assignee_name AS assigneeName, artifact_message_ids AS artifacts
    FROM tasks WHERE parent_id = ? ORDER BY task_id`,
    ).all(parentId) as (Omit<ChildRow, 'artifactMessageIds'> & { artifacts: string | null })[]
  ).map(({ artifacts, ...c }) => ({ ...c, artifactMessageIds: artifacts ? (JSON.parse(artifacts) as number[]) : [] }));

/** Whether any run of the task — in any status, merged wake-ups included — was woken by `source`. */
export const taskWokenBy = (db: Database, taskId: number, source: WakeSource): boolean =>
  prepared(
    db,
    `SELECT 1 FROM runs r, json_each(r.wakes) w WHERE r.task_id = ? AND json_extract(w.value, '$.source') = ? LIMIT 1`,
  ).get(taskId, source) !== undefined;

/** The latest run of the goal woken by `source`, merged wake-ups included, with its status and reason (a stalled goal's re-wake). */
export const goalRunWokenBy = (
  db: Database,
  goalId: number,
  source: WakeSource,
): { runId: number; status: string; reason: string | null } | null =>
  (prepared(
    db,
    `SELECT r.run_id AS runId, r.status, r.reason FROM runs r, json_each(r.wakes) w
    WHERE r.goal_id = ? AND json_extract(w.value, '$.source') = ? ORDER BY r.run_id DESC LIMIT 1`,
  ).get(goalId, source) as { runId: number; status: string; reason: string | null } | undefined) ?? null;

/**
 * The owner's agents that work in the project (`colony agents runtime NAME --project P`), those not
 * stopped first, then oldest first: whom a dispatched task of the project wakes.
 */
export const projectAgentIds = (db: Database, ownerId: number, projectId: number): number[] =>
  (
    prepared(
      db,
      `SELECT a.agent_id AS id FROM agent_runtime rt JOIN agents a ON a.agent_id = rt.agent_id
    WHERE rt.project_id = ? AND a.owner_id = ? ORDER BY rt.stopped, a.agent_id`,
    ).all(projectId, ownerId) as { id: number }[]
  ).map((r) => r.id);
