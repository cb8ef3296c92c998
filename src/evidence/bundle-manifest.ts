import type { Database } from 'better-sqlite3';
import { canonicalize } from '../canonical.js';
import { prepared } from '../engine/db.js';
import { sign, type SigningKey } from '../signing-key.js';
import {
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  type Bundle,
  type BundleEvent,
  type ManifestBody,
  type WithheldStream,
} from './bundle.js';
import type { CheckpointBody } from './checkpoint.js';
import { namedStreams } from './bundle-refs.js';
import { byUtf8 } from './goal-streams.js';

/**
 * The export's manifest (bundle.ts): the goal's streams as proven in the bundle, and every stream the
 * bundle's events name that it does not carry, withheld with the reason. The reasons are read from the log
 * (the named stream's first event), not from a read table, and a named stream that the log says is this
 * goal's — a task, run or proposal of it, its channel, its owner — is never withheld: that would be the
 * selection (goal-streams.ts) missing a stream, and Colony refuses to sign it.
 */
export type ManifestResult = { body: ManifestBody; problem: null } | { body: null; problem: string };

export function goalManifest(
  db: Database,
  goalId: number,
  checkpoint: CheckpointBody,
  streams: readonly string[],
  events: readonly BundleEvent[],
): ManifestResult {
  const carried = new Set(streams);
  const withheld = new Map<string, WithheldStream>();
  const goal = firstEvent(db, `goal-${goalId}`, checkpoint.treeSize)?.data ?? {};
  for (const e of events) {
    for (const { streamId, field } of namedStreams(e)) {
      if (carried.has(streamId) || withheld.has(streamId)) continue;
      const reason = whyWithheld(db, goalId, goal, streamId, checkpoint.treeSize);
      if (reason === null)
        return {
          body: null,
          problem: `${field} of event ${e.position} names ${streamId}, which is goal ${goalId}'s, but the goal's streams leave it out`,
        };
      withheld.set(streamId, { streamId, reason });
    }
  }
  const body: ManifestBody = {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    goalId,
    logId: checkpoint.logId,
    treeSize: checkpoint.treeSize,
    rootHash: checkpoint.rootHash,
    streams: [...streams].sort(byUtf8),
    withheld: [...withheld.values()].sort((a, b) => byUtf8(a.streamId, b.streamId)),
  };
  return { body, problem: null };
}

export const signManifest = (key: SigningKey, body: ManifestBody): Bundle['manifest'] => ({
  body,
  signature: sign(key, canonicalize(body)),
});

/** Why the bundle of `goalId` does not carry `streamId`; null when the log says it is the goal's. */
function whyWithheld(
  db: Database,
  goalId: number,
  goal: Record<string, unknown>,
  streamId: string,
  treeSize: number,
): string | null {
  const first = firstEvent(db, streamId, treeSize);
  if (!first) return 'it has no events up to the checkpoint';
  const kind = streamId.slice(0, streamId.lastIndexOf('-'));
  const ofGoal = (what: string): string | null => {
    const owner = first.data.goalId;
    if (owner === goalId) return null;
    return typeof owner === 'number' ? `${what} of goal ${owner}, not of this goal` : `${what} outside any goal`;
  };
  switch (kind) {
    case 'goal':
      return ofGoal('another goal');
    case 'task':
      return ofGoal('a task');
    case 'run':
      return ofGoal('a run');
    case 'proposal':
      return ofGoal('a proposal');
    case 'channel':
      if (streamId === `channel-${String(goal.channelId)}`) return null;
      return first.data.kind === 'dm'
        ? "a direct conversation: its messages are its two members', not this goal's"
        : 'another channel of the team (such as #approvals): it carries more than this goal';
    case 'user':
      return streamId === `user-${String(goal.ownerId)}` ? null : "another principal's stream";
    case 'agent':
      return (
        "an agent that is not the goal's coordinator, the assignee of one of its tasks, an agent spawned for it or " +
        'one of their spawn ancestors: its stream (its config, tokens and evidence from all its work) is its own'
      );
    case 'project':
      return "a project: its history is not this goal's";
    default:
      return `not part of goal ${goalId}'s history`;
  }
}

function firstEvent(db: Database, streamId: string, treeSize: number): { data: Record<string, unknown> } | null {
  const row = prepared(db, 'SELECT data FROM es_events WHERE stream_id = ? AND version = 1 AND position <= ?').get(
    streamId,
    treeSize,
  ) as { data: string } | undefined;
  if (!row) return null;
  const data = JSON.parse(row.data) as unknown;
  return { data: typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {} };
}
