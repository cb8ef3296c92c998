import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';

/**
 * Reads the reactor's sweep needs (live names): which agents have runs waiting to start, and the task
 * timers — tasks whose heartbeat_config sets an interval — with when each task's last run started.
 */

/** Agents with runs waiting to start. */
export const agentsWithQueuedRuns = (db: Database): number[] =>
  (
    prepared(db, `SELECT DISTINCT agent_id AS id FROM runs WHERE status = 'queued' ORDER BY agent_id`).all() as {
      id: number;
    }[]
  ).map((r) => r.id);

export interface TimedTask {
  taskId: number;
  agentId: number;
  intervalSec: number;
  claimedAt: string;
}
/** Claimed or running tasks whose heartbeat_config has an interval and whose assignee Colony runs (task_timer wake-ups). */
export const timedTasks = (db: Database): TimedTask[] =>
  prepared(
    db,
    `SELECT t.task_id AS taskId, t.assignee_agent_id AS agentId, CAST(json_extract(t.heartbeat, '$.interval_sec') AS INTEGER) AS intervalSec,
    t.claimed_at AS claimedAt FROM tasks t JOIN agents a ON a.agent_id = t.assignee_agent_id
    JOIN users u ON u.user_id = a.owner_id AND COALESCE(a.command, u.agent_command) IS NOT NULL
    WHERE t.status IN ('claimed', 'in_progress') AND json_extract(t.heartbeat, '$.interval_sec') > 0`,
  ).all() as TimedTask[];

/** The last run of (agent, task) that started, for task timers. */
export const lastTaskRunStart = (db: Database, agentId: number, taskId: number): string | null =>
  (
    prepared(db, 'SELECT max(started_at) AS at FROM runs WHERE agent_id = ? AND task_id = ?').get(agentId, taskId) as {
      at: string | null;
    }
  ).at;
