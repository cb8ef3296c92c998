import type { Database } from 'better-sqlite3';
import { goalSnapshot } from '../src/projections/goal-snapshot.js';
import { alternateMs, latencyFigures, type Figure } from './util.js';

/**
 * goal_snapshot_ms (median) and goal_snapshot_p95_ms: goalSnapshot() — what get_goal and
 * GET /api/goals/:id answer — for a goal of 1,000 tasks (10 roots × 9 children × 10 leaves; 300 leaves
 * done with usage, 100 claimed) in a store that holds the other goals too (bench/goal-data.ts seedGoals).
 * Baseline: the raw better-sqlite3 `SELECT * FROM tasks WHERE goal_id = ?` over the same rows, on the
 * same connection — the read every snapshot starts from, without the tree, rollups, agents, costs and
 * recent events built on it. Runs alternate.
 */
export async function benchGoalSnapshot(
  db: Database,
  goalId: number,
  goals: number,
  runs: number,
): Promise<Record<string, Figure>> {
  const raw = db.prepare('SELECT * FROM tasks WHERE goal_id = ?');
  const snap = goalSnapshot(db, goalId);
  const count = (n: { children: unknown[] }[]): number => n.reduce((k, c) => k + 1 + count(c.children as never), 0);
  if (!snap || count(snap.tasks_tree) !== 1000 || raw.all(goalId).length !== 1000)
    throw new Error(`goal ${goalId} does not hold 1,000 tasks`);
  const ms = await alternateMs(
    runs,
    Math.min(20, runs),
    () => raw.all(goalId),
    () => goalSnapshot(db, goalId),
  );
  return latencyFigures('goal_snapshot', ms, `1,000-task goal; ${goals} goals in the store`);
}
