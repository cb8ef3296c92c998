import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { channelStream } from '../events/channels.js';
import { goalStream } from '../events/goals.js';
import { proposalStream } from '../events/proposals.js';
import { taskStream } from '../events/tasks.js';
import type { GoalRow } from '../projections/goal-queries.js';
import { proposalsOfGoal } from '../projections/proposal-queries.js';
import { tasksOfGoal } from '../projections/task-queries.js';

/**
 * The console's reads that no projection query module answers yet (read-only SQL over the log and
 * the read tables, live names): the positions where a goal's snapshot changes and a config's latest
 * reputation evidence. Candidates to move into
 * projections/*-queries.ts once those files' owners take them.
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

export interface EvidenceRow {
  at: string;
  domain: string;
  delta: number;
  ref: string;
}

/** The last `limit` pieces of evidence of an (owner, config hash), oldest first. */
export const latestEvidence = (db: Database, ownerId: number, configHash: string, limit: number): EvidenceRow[] =>
  (
    prepared(
      db,
      'SELECT at, domain, delta, ref FROM evidence WHERE owner_id = ? AND config_hash = ? ORDER BY position DESC LIMIT ?',
    ).all(ownerId, configHash, limit) as EvidenceRow[]
  ).reverse();
