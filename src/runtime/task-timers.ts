import type { Database } from 'better-sqlite3';
import type { WakeRequest } from '../actions/runs.js';
import { queuedRunFor, runningRunOf } from '../projections/run-queries.js';
import { lastTaskRunStart, timedTasks } from '../projections/sweep-queries.js';
import { openBreaker } from '../projections/breaker-queries.js';

/**
 * The task_timer wake-ups due at `now` (ms): a claimed or running task whose heartbeat_config sets an
 * interval wakes its assignee once the interval has passed since the task's last run started (or since
 * the claim, before any run), unless a run of the task is already queued or running, or a loop breaker
 * paused the assignee on the task's goal (its gate would refuse a run at every sweep until the owner lifts it).
 */
export function dueTaskTimers(db: Database, now: number): WakeRequest[] {
  const due: WakeRequest[] = [];
  for (const t of timedTasks(db)) {
    const last = lastTaskRunStart(db, t.agentId, t.taskId) ?? t.claimedAt;
    const busy = queuedRunFor(db, t.agentId, t.taskId) || runningRunOf(db, t.agentId)?.taskId === t.taskId;
    if (!busy && !openBreaker(db, t.agentId, t.goalId) && Date.parse(last) + t.intervalSec * 1000 <= now) {
      due.push({ agentId: t.agentId, source: 'task_timer', taskId: t.taskId, by: 'system' });
    }
  }
  return due;
}
