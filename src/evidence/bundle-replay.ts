import { canonicalize } from '../canonical.js';
import { productProjections } from '../app.js';
import { Engine } from '../engine/engine.js';
import { toStoredEvent } from '../engine/store.js';
import { goalSnapshot } from '../projections/goal-snapshot.js';
import type { Bundle, BundleEvent } from './bundle.js';
import type { BundleFailure } from './bundle-failure.js';
import { goalStreams } from './goal-streams.js';

/**
 * Check 8 of a bundle, Colony's own: replay the bundle's events with the same projection code the server
 * runs, into a fresh in-memory database, and ask it for the goal's snapshot — it must be the one the bundle
 * carries, which is what Colony showed at the checkpoint. Then the goal's stream selection, run on the
 * replayed state, must name exactly the bundle's streams: the signed manifest (checks 3 and 4) is then
 * what Colony's own selection rule gives on the history it is about.
 */
export function replayBundle(bundle: Bundle): BundleFailure | null {
  let replayed: ReplayedGoal;
  try {
    replayed = replayGoal(bundle.events, bundle.goalId);
  } catch (e) {
    // Signed events never make a projection throw; events under a key nobody trusts might.
    return { code: 'snapshot_mismatch', message: `the events cannot be replayed: ${(e as Error).message}` };
  }
  return compare(replayed, bundle);
}

export interface ReplayedGoal {
  /** The goal's snapshot, canonical JSON parsed back. */
  snapshot: unknown;
  /** The goal's stream selection on the replayed state. */
  streams: string[];
}

/** `events` applied by the product's projections to a fresh in-memory database: what Colony would show of `goalId`. */
export function replayGoal(events: readonly BundleEvent[], goalId: number): ReplayedGoal {
  const mem = Engine.open({ file: ':memory:', durability: 'normal', projections: productProjections });
  try {
    const stored = events.map((e) =>
      toStoredEvent({
        position: e.position,
        stream_id: e.streamId,
        version: e.version,
        type: e.type,
        schema_version: e.schemaVersion,
        data: JSON.stringify(e.data),
        meta: JSON.stringify(e.meta),
        recorded_at: e.recordedAt,
      }),
    );
    mem.db.transaction(() => mem.projections.apply(mem.db, stored))();
    return {
      snapshot: JSON.parse(canonicalize(goalSnapshot(mem.db, goalId))) as unknown,
      streams: goalStreams(mem.db, goalId),
    };
  } finally {
    mem.close();
  }
}

function compare({ snapshot, streams: expected }: ReplayedGoal, bundle: Bundle): BundleFailure | null {
  const difference = firstDifference(bundle.snapshot, snapshot, 'snapshot');
  if (difference)
    return {
      code: 'snapshot_mismatch',
      message: `replaying the events does not give the bundle's snapshot: ${difference}`,
    };
  const listed = bundle.streams.map((h) => h.streamId);
  const [expectedSet, listedSet] = [new Set(expected), new Set(listed)];
  const extra = listed.find((s) => !expectedSet.has(s));
  if (extra)
    return {
      code: 'foreign_stream',
      streamId: extra,
      message: `${extra} is not one of goal ${bundle.goalId}'s streams in the replayed history`,
    };
  const absent = expected.find((s) => !listedSet.has(s));
  if (absent)
    return {
      code: 'missing_stream',
      streamId: absent,
      message: `the replayed history names ${absent}, but the bundle has none of its events`,
    };
  return null;
}

/** Where two JSON values first differ, as a path and both values (clipped); null when equal. */
export function firstDifference(expected: unknown, actual: unknown, path: string): string | null {
  if (canonicalize(expected) === canonicalize(actual)) return null;
  if (isObject(expected) && isObject(actual) && Array.isArray(expected) === Array.isArray(actual)) {
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])];
    for (const k of keys) {
      const d = firstDifference(
        expected[k as never],
        actual[k as never],
        Array.isArray(expected) ? `${path}[${k}]` : `${path}.${k}`,
      );
      if (d) return d;
    }
  }
  return `${path} is ${clip(expected)} in the bundle but ${clip(actual)} in the replay`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const clip = (v: unknown): string => {
  const s = v === undefined ? 'absent' : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
};
