import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';

/**
 * What a goal produced and who is on it now, for the console's goal page (http/api-goal-outcome.ts): the
 * messages of its channel marked as artifacts, the web apps its agents presented while it ran, and the
 * runs going on for it. Reads only; the task rows carry their own artifact ids.
 */

/** Messages of the channel whose metadata marks them `kind: artifact`, oldest first. */
export const artifactIdsInChannel = (db: Database, channelId: number, limit: number): number[] =>
  (
    prepared(
      db,
      `SELECT message_id AS id FROM messages WHERE channel_id = ? AND json_extract(metadata, '$.kind') = 'artifact'
        ORDER BY message_id LIMIT ?`,
    ).all(channelId, limit) as { id: number }[]
  ).map((r) => r.id);

export interface GoalWebapp {
  appId: string;
  kind: string;
  title: string;
  description: string;
  agent: string;
  presentedAt: string;
  retiredAt: string | null;
}

/** Web apps presented by any of these agents since `since` (the goal's creation), newest first. */
export const webappsPresentedBy = (db: Database, agentIds: readonly number[], since: string): GoalWebapp[] =>
  agentIds.length === 0
    ? []
    : (prepared(
        db,
        `SELECT w.app_id AS appId, w.kind, w.title, w.description, a.name AS agent, w.last_presented_at AS presentedAt, w.retired_at AS retiredAt
           FROM webapps w JOIN agents a ON a.agent_id = w.agent_id
          WHERE w.agent_id IN (SELECT value FROM json_each(?)) AND w.last_presented_at >= ?
          ORDER BY w.last_presented_at DESC LIMIT 50`,
      ).all(JSON.stringify(agentIds), since) as GoalWebapp[]);

export interface WorkingRun {
  runId: number;
  agent: string;
  taskId: number | null;
  startedAt: string | null;
}

/** The goal's runs going on now (the agents at work on it), oldest first. */
export const runningRunsOfGoal = (db: Database, goalId: number): WorkingRun[] =>
  prepared(
    db,
    `SELECT r.run_id AS runId, a.name AS agent, r.task_id AS taskId, r.started_at AS startedAt
       FROM runs r JOIN agents a ON a.agent_id = r.agent_id WHERE r.goal_id = ? AND r.status = 'running' ORDER BY r.run_id`,
  ).all(goalId) as WorkingRun[];
