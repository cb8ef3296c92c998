import type { Database } from 'better-sqlite3';
import { readStream } from '../engine/store.js';
import { taskStream, type TaskVerified } from '../events/tasks.js';
import type { TaskRow } from '../projections/task-queries.js';

/**
 * A task's verdicts as the console's task detail shows them, oldest first, read from the task's own stream
 * (what its goal's bundle carries): who judged — the recipe with its exit, the peer or the owner with their
 * reasons — what the task became, and the rejection's place in the goal's retry limit. The output is as
 * recorded: its end, secret values masked.
 */
export interface VerdictView {
  at: string;
  verdict: 'approve' | 'reject';
  verifier_kind: string;
  verifier: string;
  recipe: string | null;
  exit_code: number | null;
  reason: string;
  output: string | null;
  to: string;
  rejection: { count: number; limit: number } | null;
}

export function verdictsOf(db: Database, taskId: number): VerdictView[] {
  return readStream(db, taskStream(taskId))
    .filter((e) => e.type === 'TaskVerified')
    .map((e) => {
      const v = e.data as TaskVerified['data'];
      return {
        at: e.recordedAt,
        verdict: v.verdict,
        verifier_kind: v.verifierKind,
        verifier: v.verifier.name,
        recipe: v.recipe?.name ?? null,
        exit_code: v.exitCode,
        reason: v.reason,
        output: v.output,
        to: v.to,
        rejection: v.rejections ?? null,
      };
    });
}

/** Whose verdict a handed-in task waits for: an auto-verified one (a leaf of a goal requiring evidence) waits for the owner. */
export function waitsFor(t: TaskRow): 'owner' | 'peer' | 'recipe' | null {
  if (t.status !== 'awaiting_verification') return null;
  if (t.verifier.kind === 'auto') return 'owner';
  return t.verifier.kind === 'peer' ? 'peer' : 'recipe';
}
