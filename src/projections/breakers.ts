import type { BreakerEvent } from '../events/breakers.js';
import type { RunEvent } from '../events/runs.js';
import type { ProposalEvent } from '../events/proposals.js';
import type { MessagePosted } from '../events/channels.js';
import type { TaskClaimed, TaskCompleted, TaskCreated, TaskDispatched, TaskVerified } from '../events/tasks.js';
import type { StoredEvent } from '../engine/event.js';
import { sqlFor, type Projection, type TableNames } from '../engine/projection.js';
import { run, type Steps } from '../engine/projection-sql.js';

/**
 * The breakers' read side. `breakers`: one row per (agent, goal) that ever tripped (goal_key 0: outside
 * goals), open until its owner lifts it; `cutoff_run_id` is the newest run of its last trip's evidence,
 * so the detectors count only runs after it once it is lifted. `breaker_settings`: each agent's own
 * thresholds. `breaker_runs`: each run of an agent that was queued, with its goal, its wake source and
 * its progress — the claims, hand-ins, messages, proposals, verdicts, tasks created and dispatches the
 * agent made while the run was running (an agent runs one run at a time) — all derived from the log, so a
 * rebuild gives the same counts.
 */
type T = 'breakers' | 'breaker_settings' | 'breaker_runs';
type Progress = TaskClaimed | TaskCompleted | TaskCreated | TaskDispatched | TaskVerified | MessagePosted;
type E = BreakerEvent | RunEvent | Progress | ProposalEvent;

const sql = sqlFor((t: Record<T, string>) => ({
  trip: `INSERT INTO "${t.breakers}" (agent_id, goal_key, goal_id, owner_id, breaker, reason, evidence, tripped_by, tripped_at, open, cutoff_run_id)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
    ON CONFLICT(agent_id, goal_key) DO UPDATE SET breaker = excluded.breaker, reason = excluded.reason, evidence = excluded.evidence,
      tripped_by = excluded.tripped_by, tripped_at = excluded.tripped_at, open = 1, reset_at = NULL, reset_by = NULL,
      cutoff_run_id = max("${t.breakers}".cutoff_run_id, excluded.cutoff_run_id)`,
  reset: `UPDATE "${t.breakers}" SET open = 0, reset_at = ?, reset_by = ? WHERE agent_id = ? AND goal_key = ?`,
  settings: `INSERT INTO "${t.breaker_settings}" (agent_id, max_runs_without_progress, max_repeated_failures, max_wakes_per_hour)
    VALUES (?, ?, ?, ?) ON CONFLICT(agent_id) DO UPDATE SET max_runs_without_progress = excluded.max_runs_without_progress,
      max_repeated_failures = excluded.max_repeated_failures, max_wakes_per_hour = excluded.max_wakes_per_hour`,
  queued: `INSERT OR IGNORE INTO "${t.breaker_runs}" (run_id, agent_id, goal_key, source, status, progress, queued_at) VALUES (?, ?, ?, ?, 'queued', 0, ?)`,
  status: `UPDATE "${t.breaker_runs}" SET status = ? WHERE run_id = ? AND status = ?`,
  progress: `UPDATE "${t.breaker_runs}" SET progress = progress + 1 WHERE agent_id = ? AND status = 'running'`,
}));

export const breakersProjection: Projection<E, T> = {
  name: 'breakers',
  version: 1,
  handles: [
    'BreakerTripped',
    'BreakerReset',
    'BreakersConfigured',
    'RunQueued',
    'RunRefused',
    'RunStarted',
    'RunFinished',
    'RunFailed',
    'TaskClaimed',
    'TaskCompleted',
    'TaskCreated',
    'TaskDispatched',
    'TaskVerified',
    'MessagePosted',
    'TaskTreeProposed',
    'AgentProposed',
  ],
  tables: ['breakers', 'breaker_settings', 'breaker_runs'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.breakers}" (
        agent_id INTEGER NOT NULL, goal_key INTEGER NOT NULL, goal_id INTEGER, owner_id INTEGER NOT NULL, breaker TEXT NOT NULL,
        reason TEXT NOT NULL, evidence TEXT NOT NULL, tripped_by TEXT NOT NULL, tripped_at TEXT NOT NULL, open INTEGER NOT NULL,
        reset_at TEXT, reset_by TEXT, cutoff_run_id INTEGER NOT NULL, PRIMARY KEY (agent_id, goal_key));
      CREATE INDEX IF NOT EXISTS "${t.breakers}_by_owner" ON "${t.breakers}" (owner_id, open, tripped_at);
      CREATE TABLE IF NOT EXISTS "${t.breaker_settings}" (
        agent_id INTEGER PRIMARY KEY, max_runs_without_progress INTEGER, max_repeated_failures INTEGER, max_wakes_per_hour INTEGER);
      CREATE TABLE IF NOT EXISTS "${t.breaker_runs}" (
        run_id INTEGER PRIMARY KEY, agent_id INTEGER NOT NULL, goal_key INTEGER NOT NULL, source TEXT NOT NULL, status TEXT NOT NULL,
        progress INTEGER NOT NULL, queued_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS "${t.breaker_runs}_by_status" ON "${t.breaker_runs}" (agent_id, status);
      CREATE INDEX IF NOT EXISTS "${t.breaker_runs}_by_goal" ON "${t.breaker_runs}" (agent_id, goal_key, run_id);
      CREATE INDEX IF NOT EXISTS "${t.breaker_runs}_by_source" ON "${t.breaker_runs}" (agent_id, source, queued_at);
    `;
  },
  apply(e, t) {
    switch (e.type) {
      case 'BreakerTripped':
      case 'BreakerReset':
      case 'BreakersConfigured':
        return applyBreaker(e, t);
      case 'RunQueued':
      case 'RunRefused':
      case 'RunStarted':
      case 'RunFinished':
      case 'RunFailed':
        return applyRun(e, t);
      case 'TaskClaimed':
      case 'TaskCompleted':
      case 'TaskCreated':
      case 'TaskDispatched':
      case 'TaskVerified':
      case 'MessagePosted':
      case 'TaskTreeProposed':
      case 'AgentProposed':
        return applyProgress(e, t);
      default:
        return noSteps();
    }
  },
};

function* noSteps(): Steps {}

function* applyBreaker(e: StoredEvent<BreakerEvent>, t: TableNames<T>): Steps {
  const q = sql(t);
  switch (e.type) {
    case 'BreakerTripped': {
      const d = e.data;
      const cutoff = Math.max(0, ...d.evidence.runIds);
      const evidence = JSON.stringify(d.evidence);
      const row = [d.agentId, d.goalId ?? 0, d.goalId, d.ownerId, d.breaker, d.reason, evidence, d.by, e.recordedAt];
      yield run(q.trip, ...row, cutoff);
      return;
    }
    case 'BreakerReset':
      yield run(q.reset, e.recordedAt, e.data.by, e.data.agentId, e.data.goalId ?? 0);
      return;
    case 'BreakersConfigured': {
      const s = e.data.settings;
      yield run(q.settings, e.data.agentId, s.maxRunsWithoutProgress, s.maxRepeatedFailures, s.maxWakesPerHour);
      return;
    }
    default: {
      const never: never = e;
      return never;
    }
  }
}

function* applyRun(e: StoredEvent<RunEvent>, t: TableNames<T>): Steps {
  const q = sql(t);
  switch (e.type) {
    case 'RunQueued': {
      const d = e.data;
      yield run(q.queued, d.runId, d.agentId, d.goalId ?? 0, d.wake.source, e.recordedAt);
      return;
    }
    case 'RunRefused':
      yield run(q.status, 'refused', e.data.runId, 'queued');
      return;
    case 'RunStarted':
      yield run(q.status, 'running', e.data.runId, 'queued');
      return;
    case 'RunFinished':
      yield run(q.status, 'ended', e.data.runId, 'running');
      return;
    case 'RunFailed':
      // A cancelled run, or one that never started, is no run of the agent's that changed nothing.
      yield run(q.status, e.data.cancelledBy === undefined ? 'ended' : 'cancelled', e.data.runId, 'running');
      yield run(q.status, 'cancelled', e.data.runId, 'queued');
      return;
    default:
  }
}

/** The agent whose write this is, by its principal key (`agent-<id>`); null for users and Colony. */
const agentOf = (key: string): number | null => (key.startsWith('agent-') ? Number(key.slice(6)) : null);

function progressAgent(e: StoredEvent<Progress | ProposalEvent>): number | null {
  switch (e.type) {
    case 'TaskClaimed':
      return e.data.renewed ? null : e.data.agentId;
    case 'TaskCompleted':
      return e.data.agentId;
    case 'TaskCreated':
    case 'TaskDispatched':
      return agentOf(e.data.by.key);
    case 'TaskVerified':
      return agentOf(e.data.verifier.key);
    case 'MessagePosted':
      return agentOf(e.data.from);
    case 'TaskTreeProposed':
    case 'AgentProposed':
      return agentOf(e.data.proposer.key);
    default:
      return null;
  }
}

function* applyProgress(e: StoredEvent<Progress | ProposalEvent>, t: TableNames<T>): Steps {
  const agentId = progressAgent(e);
  if (agentId !== null) yield run(sql(t).progress, agentId);
}
