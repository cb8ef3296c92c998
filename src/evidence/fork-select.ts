import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { EventRow } from '../engine/event.js';
import { rowsOfStreams } from '../engine/fork-log.js';
import { breakerStream } from '../events/breakers.js';
import { runtimeStream } from '../events/runs.js';
import { namedStreams } from './bundle-refs.js';
import { goalStreams } from './goal-streams.js';

/**
 * Which origin streams a fork of a goal copies, decided on the log replayed to the fork's position:
 *  - the goal's history exactly as its bundle selects it (goal-streams.ts: the goal, its channel, tasks,
 *    proposals and runs, its owner, and the agents that worked on it with their spawn ancestors) — replaying
 *    these gives the goal's snapshot at that position, which `colony verify-bundle` already proves of a bundle;
 *  - what a re-run needs besides: every agent those events name (a peer verifier, an earlier claimant) with
 *    its ancestors, each such agent's runtime (how it runs: runtime, sandbox, project) and breaker streams,
 *    the projects they name, the owner's verifier recipes, and the goal's resource requests.
 * Only the goal's tenant: a stream whose first event names another owner is never taken.
 */
export function forkStreams(mem: Database, source: Database, goalId: number, ownerId: number, to: number): string[] {
  const chosen = new Set<string>();
  const ours = (stream: string) => {
    const first = firstData(source, stream, to);
    return first !== null && (first.ownerId === undefined || first.ownerId === ownerId);
  };
  const take = (streams: readonly string[]): string[] => {
    const fresh = streams.filter((s) => !chosen.has(s) && ours(s));
    for (const s of fresh) chosen.add(s);
    return fresh;
  };
  // What the copied events name, until nothing new is named (an agent names its parent, a runtime its project).
  for (let fresh = take(goalStreams(mem, goalId)); fresh.length > 0;) {
    const named = new Set<string>();
    for (const s of fresh.filter((x) => x.startsWith('agent-'))) {
      const agentId = Number(s.slice('agent-'.length));
      named.add(runtimeStream(agentId)).add(breakerStream(agentId));
    }
    for (const row of rowsOfStreams(source, fresh, to)) {
      const data = JSON.parse(row.data) as Record<string, unknown> | null;
      for (const { streamId } of namedStreams({ type: row.type, data }))
        if (/^(agent|project)-\d+$/.test(streamId)) named.add(streamId);
      const project = data?.projectId;
      if (Number.isSafeInteger(project) && (project as number) > 0) named.add(`project-${project as number}`);
    }
    fresh = take([...named]);
  }
  for (const stream of streamsOfKind(mem, 'verifier')) take([stream]);
  for (const stream of streamsOfKind(mem, 'resource-request'))
    if (firstData(source, stream, to)?.goalId === goalId) take([stream]);
  return [...chosen].sort();
}

/** Events of chosen streams that are not copied: credentials (the fork issues its own), other goals' breakers. */
export function keepInFork(row: EventRow, goalId: number): boolean {
  if (row.type === 'TokenIssued' || row.type === 'TokenRevoked') return false;
  if (row.stream_id.startsWith('breaker-')) {
    const goal = (JSON.parse(row.data) as { goalId?: unknown }).goalId;
    return goal === undefined || goal === goalId;
  }
  return true;
}

/**
 * From the owner's `#approvals` and `#requests`, what belongs to the goal: the channel's creation, the cards of
 * its proposals and requests (by their metadata) and the reactions on them — an owner deciding a copied proposal
 * in the fork reacts on its card. Direct messages are never copied (they are their two members', and mix goals).
 */
export function fixedChannelRows(
  mem: Database,
  source: Database,
  goal: { goalId: number; ownerId: number; tasks: ReadonlySet<number> },
  to: number,
): EventRow[] {
  const { goalId, ownerId, tasks } = goal;
  const out: EventRow[] = [];
  for (const stream of streamsOfKind(mem, 'channel')) {
    const data = firstData(source, stream, to);
    if (
      !data ||
      data.ownerId !== ownerId ||
      data.kind !== 'public' ||
      !['approvals', 'requests'].includes(data.name as string)
    )
      continue;
    const cards = new Set<number>();
    for (const row of rowsOfStreams(source, [stream], to)) {
      const d = JSON.parse(row.data) as { messageId?: number; metadata?: Record<string, unknown> | null };
      const meta = d.metadata ?? {};
      const ofGoal = meta.goal_id === goalId || (typeof meta.task_id === 'number' && tasks.has(meta.task_id));
      if (row.type === 'MessagePosted' && ofGoal) cards.add(d.messageId!);
      if (row.type === 'ChannelCreated' || (d.messageId !== undefined && cards.has(d.messageId))) out.push(row);
    }
  }
  return out;
}

function firstData(db: Database, stream: string, to: number): Record<string, unknown> | null {
  const row = prepared(db, 'SELECT data FROM es_events WHERE stream_id = ? AND version = 1 AND position <= ?').get(
    stream,
    to,
  ) as { data: string } | undefined;
  return row ? (JSON.parse(row.data) as Record<string, unknown>) : null;
}

/** The streams of one kind that exist at the replayed position (the streams projection of the replay). */
const streamsOfKind = (mem: Database, kind: string): string[] =>
  prepared(mem, 'SELECT stream_id FROM streams WHERE kind = ? ORDER BY stream_id').pluck().all(kind) as string[];
