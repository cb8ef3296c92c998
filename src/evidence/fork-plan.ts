import type { Database } from 'better-sqlite3';
import { productProjections } from '../app.js';
import { prepared } from '../engine/db.js';
import type { EventRow } from '../engine/event.js';
import { hashAt, rowsOfStreams } from '../engine/fork-log.js';
import { sequenceMarks } from '../engine/ids.js';
import { replayTo } from '../engine/replay.js';
import { readHead } from '../engine/store.js';
import { DomainError } from '../errors.js';
import { goalStream } from '../events/goals.js';
import type { ChainPoint, SecretNeeded } from '../events/forks.js';
import { getUser } from '../projections/principal-queries.js';
import { activeSecretsIn, type ScopeKey } from '../projections/secrets.js';
import { tasksOfGoal } from '../projections/task-queries.js';
import { fixedChannelRows, forkStreams, keepInFork } from './fork-select.js';

/**
 * Everything a fork will hold, found by reading the origin log only: the checks of the goal and the
 * position, the streams and rows to copy (fork-select.ts), the secrets it will need (named) and the
 * points of the origin chain it names. Nothing is written; a wrong input is a DomainError here.
 */
export interface ForkPlan {
  goalId: number;
  ownerId: number;
  ownerName: string;
  position: number;
  origin: { head: ChainPoint; at: ChainPoint };
  streams: string[];
  rows: EventRow[];
  /** The agents whose streams are copied: each gets a new token in the fork (tokens are not copied). */
  agentIds: number[];
  secretsNotCopied: SecretNeeded[];
  /** The origin's id high-water marks: the fork's new ids continue after them (message ids name no stream). */
  sequences: Map<string, number>;
}

export function planFork(source: Database, goalId: number, position: number, tenant: number | null = null): ForkPlan {
  const head = readHead(source);
  if (!Number.isSafeInteger(position) || position < 1)
    throw new DomainError('ErrInvalidInput', `position must be a positive integer, not ${String(position)}`, {
      field: 'position',
    });
  const created = goalCreation(source, goalId);
  if (!created || (tenant !== null && created.ownerId !== tenant))
    throw new DomainError('ErrGoalNotFound', `goal ${goalId} not found`, { goal_id: goalId });
  if (position > head.position)
    throw new DomainError(
      'ErrInvalidInput',
      `position ${position} is beyond goal ${goalId}'s history: the log ends at position ${head.position}`,
      { field: 'position', head: head.position },
    );
  if (position < created.position)
    throw new DomainError(
      'ErrInvalidInput',
      `goal ${goalId} did not exist yet at position ${position}: its history starts at position ${created.position}`,
      { field: 'position', first: created.position },
    );
  const mem = replayTo(source, position, productProjections);
  try {
    const tasks = new Set(tasksOfGoal(mem.db, goalId).map((t) => t.taskId));
    const streams = forkStreams(mem.db, source, goalId, created.ownerId, position);
    const goal = { goalId, ownerId: created.ownerId, tasks };
    const rows = [
      ...rowsOfStreams(source, streams, position).filter((r) => keepInFork(r, goalId)),
      ...fixedChannelRows(mem.db, source, goal, position),
    ].sort((a, b) => a.position - b.position);
    const agentIds = streams.filter((s) => /^agent-\d+$/.test(s)).map((s) => Number(s.slice('agent-'.length)));
    const scopes: ScopeKey[] = [
      { type: 'user', id: created.ownerId },
      ...agentIds.map((id) => ({ type: 'agent' as const, id })),
      ...[...tasks].map((id) => ({ type: 'task' as const, id })),
    ];
    return {
      goalId,
      ownerId: created.ownerId,
      ownerName: getUser(mem.db, created.ownerId)?.name ?? 'owner',
      position,
      origin: { head: { ...head }, at: { position, hash: hashAt(source, position)! } },
      streams: [...new Set(rows.map((r) => r.stream_id))].sort(),
      rows,
      agentIds,
      sequences: sequenceMarks(source),
      secretsNotCopied: activeSecretsIn(mem.db, created.ownerId, scopes).map((s) => ({
        name: s.name,
        scope: { type: s.scopeType, id: s.scopeId, label: s.scopeLabel },
      })),
    };
  } finally {
    mem.close();
  }
}

/** Where the goal's stream begins and whose it is (null: no such goal in the log). */
function goalCreation(db: Database, goalId: number): { position: number; ownerId: number } | null {
  const row = prepared(db, 'SELECT position, data FROM es_events WHERE stream_id = ? AND version = 1').get(
    goalStream(goalId),
  ) as { position: number; data: string } | undefined;
  return row ? { position: row.position, ownerId: (JSON.parse(row.data) as { ownerId: number }).ownerId } : null;
}
