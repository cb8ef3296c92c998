import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { RUNNABLE_SQL } from './principal-queries.js';
import { dmName } from '../events/channels.js';

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
  goalId: number | null;
  intervalSec: number;
  claimedAt: string;
}
/** Claimed or running tasks whose heartbeat_config has an interval and whose assignee Colony runs (task_timer wake-ups). */
export const timedTasks = (db: Database): TimedTask[] =>
  prepared(
    db,
    `SELECT t.task_id AS taskId, t.assignee_agent_id AS agentId, t.goal_id AS goalId, CAST(json_extract(t.heartbeat, '$.interval_sec') AS INTEGER) AS intervalSec,
    t.claimed_at AS claimedAt FROM tasks t JOIN agents a ON a.agent_id = t.assignee_agent_id
    JOIN users u ON u.user_id = a.owner_id AND ${RUNNABLE_SQL}
    WHERE t.status IN ('claimed', 'in_progress') AND json_extract(t.heartbeat, '$.interval_sec') > 0`,
  ).all() as TimedTask[];

/** The last run of (agent, task) that started, for task timers. */
export const lastTaskRunStart = (db: Database, agentId: number, taskId: number): string | null =>
  (
    prepared(db, 'SELECT max(started_at) AS at FROM runs WHERE agent_id = ? AND task_id = ?').get(agentId, taskId) as {
      at: string | null;
    }
  ).at;

export interface DraftGoal {
  goalId: number;
  ownerId: number;
  title: string;
  createdAt: string;
  coordinatorAgentId: number;
  coordinatorName: string;
  /** Whether Colony runs the coordinator (an agent command of its own or the team's); else an outside client holds it. */
  runnable: boolean;
  /** The last time anything of Colony's ran for the goal: its last run's end (or queueing), else its creation. */
  lastActivity: string;
}
/** Draft goals created before `before` with no pending task-tree proposal and no queued or running run: the candidates for a stall. */
export const idleDraftGoals = (db: Database, before: string): DraftGoal[] =>
  (
    prepared(
      db,
      `SELECT g.goal_id AS goalId, g.owner_id AS ownerId, g.title, g.created_at AS createdAt,
      g.coordinator_agent_id AS coordinatorAgentId, a.name AS coordinatorName,
      ${RUNNABLE_SQL} AS runnable,
      COALESCE((SELECT max(COALESCE(r.finished_at, r.queued_at)) FROM runs r WHERE r.goal_id = g.goal_id), g.created_at) AS lastActivity
    FROM goals g JOIN agents a ON a.agent_id = g.coordinator_agent_id JOIN users u ON u.user_id = a.owner_id
    WHERE g.status = 'draft' AND g.created_at <= ?
      AND NOT EXISTS (SELECT 1 FROM proposals p WHERE p.goal_id = g.goal_id AND p.kind = 'task_tree' AND p.status = 'pending')
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.goal_id = g.goal_id AND r.status IN ('queued', 'running'))
    ORDER BY g.goal_id`,
    ).all(before) as (Omit<DraftGoal, 'runnable'> & { runnable: number })[]
  ).map((g) => ({ ...g, runnable: g.runnable === 1 }));

/** Whether the owner was already sent a system DM with this `event` about the goal (once per goal, across restarts). */
export const ownerToldOfGoal = (db: Database, dmChannel: number | null, event: string, goalId: number): boolean =>
  dmChannel !== null &&
  prepared(
    db,
    `SELECT 1 FROM messages WHERE channel_id = ? AND from_key = 'system'
      AND json_extract(metadata, '$.event') = ? AND json_extract(metadata, '$.goal_id') = ? LIMIT 1`,
  ).get(dmChannel, event, goalId) !== undefined;

/**
 * Whether the owner was already told that this agent's runs fail for `cause` since its last run that
 * succeeded (one DM per agent and cause: actions/runs.ts).
 */
export const ownerToldOfRunCause = (db: Database, dmChannel: number, agentId: number, cause: string): boolean =>
  prepared(
    db,
    `SELECT 1 FROM messages WHERE channel_id = ? AND from_key = 'system' AND json_extract(metadata, '$.event') = 'RunFailed'
      AND json_extract(metadata, '$.agent_id') = ? AND json_extract(metadata, '$.cause') = ?
      AND created_at >= COALESCE((SELECT max(finished_at) FROM runs WHERE agent_id = ? AND status = 'succeeded'), '') LIMIT 1`,
  ).get(dmChannel, agentId, cause, agentId) !== undefined;

export interface StalledGoal {
  goalId: number;
  title: string;
  /** What the owner was told (goal-stalls.ts), and when. */
  told: string;
  toldAt: string;
}

/**
 * The owner's goals the owner was told are stalled (the one DM of runtime/goal-stalls.ts, in the system's DM
 * channel with the owner) and that still are: draft, with no task tree waiting for approval. The console's
 * attention list.
 */
export const stalledGoalsTold = (db: Database, ownerId: number, event: string): StalledGoal[] =>
  prepared(
    db,
    `SELECT g.goal_id AS goalId, g.title, m.body AS told, m.created_at AS toldAt
       FROM channels c JOIN messages m ON m.channel_id = c.channel_id
       JOIN goals g ON g.goal_id = json_extract(m.metadata, '$.goal_id') AND g.owner_id = c.owner_id
      WHERE c.owner_id = ? AND c.name = ? AND m.from_key = 'system' AND json_extract(m.metadata, '$.event') = ?
        AND g.status = 'draft'
        AND NOT EXISTS (SELECT 1 FROM proposals p WHERE p.goal_id = g.goal_id AND p.kind = 'task_tree' AND p.status = 'pending')
      ORDER BY m.message_id DESC`,
  ).all(ownerId, dmName('system', `user-${ownerId}`), event) as StalledGoal[];
