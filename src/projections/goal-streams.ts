import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { channelStream } from '../events/channels.js';
import { goalStream } from '../events/goals.js';
import { proposalStream } from '../events/proposals.js';
import { taskStream } from '../events/tasks.js';
import type { GoalRow } from './goal-queries.js';
import { proposalsOfGoal } from './proposal-queries.js';
import { tasksOfGoal } from './task-queries.js';

/**
 * A goal's place in the log, for the console's time travel: the streams whose events change what the
 * goal's snapshot shows, and where in the log those events are.
 */
/** Every stream whose events change what a goal's snapshot shows: the goal, its tasks, its proposals and its channel. */
export function goalStreams(db: Database, goal: GoalRow): string[] {
  return [
    goalStream(goal.goalId),
    channelStream(goal.channelId),
    ...tasksOfGoal(db, goal.goalId).map((t) => taskStream(t.taskId)),
    ...proposalsOfGoal(db, goal.goalId).map((p) => proposalStream(p.proposalId)),
  ];
}

export interface LogStop {
  position: number;
  type: string;
  at: string;
}

/** The events of these streams in log order (position, type, time only). */
export const eventsOfStreams = (db: Database, streams: readonly string[]): LogStop[] =>
  prepared(
    db,
    `SELECT position, type, recorded_at AS at FROM es_events WHERE stream_id IN (SELECT value FROM json_each(?)) ORDER BY position`,
  ).all(JSON.stringify(streams)) as LogStop[];
