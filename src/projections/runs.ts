import type { RunEvent, RuntimeEvent } from '../events/runs.js';
import type { CostRecorded } from '../events/tasks.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run, get, type RunResult } from '../engine/projection-sql.js';
import {
  applyRuntimeEvent,
  ensureRuntime,
  runtimeMessage,
  runtimeRunEnded,
  runtimeRunStarted,
} from './runs-agent-runtime.js';
import { applyRunFinished } from './runs-finished.js';

/**
 * Runs, their session transcripts and each agent's runtime (status, settings, last activity) as read
 * tables. An agent's runtime status follows its runs — executing while one runs, idle after a success,
 * error after a failure or a timeout — unless the owner stopped it (runs-agent-runtime.ts keeps that table).
 * Queries: run-queries.ts.
 */
export type T = 'runs' | 'session_messages' | 'agent_runtime';

const sql = sqlFor((t: Record<T, string>) => ({
  queued: `INSERT OR IGNORE INTO "${t.runs}" (run_id, agent_id, owner_id, session_id, task_id, goal_id, depth, source, wakes, status, queue_reason,
    not_before, queued_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
  refusedNew: `INSERT OR IGNORE INTO "${t.runs}" (run_id, agent_id, owner_id, session_id, task_id, goal_id, depth, source, wakes, status, gate, reason,
    queued_at, updated_at) VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, 'refused', ?, ?, ?, ?)`,
  refusedQueued: `UPDATE "${t.runs}" SET status = 'refused', gate = ?, reason = ?, updated_at = ? WHERE run_id = ?`,
  // wakes is compact JSON (JSON.stringify), so appending to the text is what json_insert did, on both dialects.
  merge: `UPDATE "${t.runs}" SET wakes = CASE WHEN wakes = '[]' THEN '[' || CAST(@wake AS TEXT) || ']'
    ELSE substr(wakes, 1, length(wakes) - 1) || ',' || CAST(@wake AS TEXT) || ']' END, updated_at = @at WHERE run_id = @run`,
  started: `UPDATE "${t.runs}" SET status = 'running', started_at = ?, config_hash = ?, reserved_tokens = ?, reserved_cents = ?, trace_id = ?,
    timeout_sec = ?, updated_at = ? WHERE run_id = ?`,
  timedOut: `UPDATE "${t.runs}" SET timed_out = 1, updated_at = ? WHERE run_id = ?`,
  launched: `UPDATE "${t.runs}" SET sandbox = ?, updated_at = ? WHERE run_id = ?`,
  failed: `UPDATE "${t.runs}" SET status = 'failed', reason = ?, cancelled_by = ?, cause = ?, finished_at = ?, reserved_tokens = 0, reserved_cents = 0, updated_at = ?
    WHERE run_id = ?`,
  message: `INSERT OR IGNORE INTO "${t.session_messages}" (run_id, seq, session_id, role, content, truncated, bytes, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  lastMessage: `UPDATE "${t.runs}" SET last_message_at = ?, preview = ?, updated_at = ? WHERE run_id = ?`,
  sessionOf: `SELECT session_id AS sessionId, agent_id AS agentId FROM "${t.runs}" WHERE run_id = ?`,
  reported: `UPDATE "${t.runs}" SET reported_tokens = reported_tokens + ?, reported_cents = reported_cents + ? WHERE run_id = ?`,
  spent: `UPDATE "${t.runs}" SET spent_tokens = spent_tokens + ?, spent_cents = spent_cents + ? WHERE run_id = ?`,
}));

export const runsProjection: Projection<RunEvent | RuntimeEvent | CostRecorded, T> = {
  name: 'runs',
  // 7: spent_tokens/spent_cents (the run's own usage as recorded, streamed while it runs), daily_token_budget.
  version: 7,
  handles: [
    'RunQueued',
    'RunWakeMerged',
    'RunRefused',
    'RunStarted',
    'RunLaunched',
    'RunFinished',
    'RunTimedOut',
    'RunFailed',
    'SessionMessageRecorded',
    'RuntimeConfigured',
    'AgentStopped',
    'AgentStarted',
    'AgentProjectSet',
    'SandboxConfigured',
    'CostRecorded',
  ],
  tables: ['runs', 'session_messages', 'agent_runtime'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.runs}" (
        run_id INTEGER PRIMARY KEY, agent_id INTEGER NOT NULL, owner_id INTEGER NOT NULL, session_id TEXT UNIQUE, task_id INTEGER, goal_id INTEGER,
        depth INTEGER NOT NULL, source TEXT NOT NULL, wakes TEXT NOT NULL, status TEXT NOT NULL, queue_reason TEXT, not_before TEXT,
        gate TEXT, reason TEXT, queued_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, config_hash TEXT, trace_id TEXT, timeout_sec INTEGER,
        timed_out INTEGER NOT NULL DEFAULT 0, exit_code INTEGER, signal TEXT, duration_ms INTEGER, tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0, cost_cents INTEGER NOT NULL DEFAULT 0, reserved_tokens INTEGER NOT NULL DEFAULT 0,
        reserved_cents INTEGER NOT NULL DEFAULT 0, reported_tokens INTEGER NOT NULL DEFAULT 0, reported_cents INTEGER NOT NULL DEFAULT 0,
        spent_tokens INTEGER NOT NULL DEFAULT 0, spent_cents INTEGER NOT NULL DEFAULT 0, output_tail TEXT, last_message_at TEXT, preview TEXT, sandbox TEXT, limit_hit TEXT, cancelled_by TEXT, updated_at TEXT NOT NULL,
        runtime TEXT, cost_known INTEGER NOT NULL DEFAULT 1, billing_lane TEXT, cli_session TEXT, cause TEXT);
      CREATE INDEX IF NOT EXISTS "${t.runs}_by_agent" ON "${t.runs}" (agent_id, status, run_id);
      CREATE INDEX IF NOT EXISTS "${t.runs}_by_agent_started" ON "${t.runs}" (agent_id, started_at);
      CREATE INDEX IF NOT EXISTS "${t.runs}_by_status" ON "${t.runs}" (status, run_id);
      CREATE INDEX IF NOT EXISTS "${t.runs}_by_goal" ON "${t.runs}" (goal_id, run_id);
      CREATE INDEX IF NOT EXISTS "${t.runs}_by_task" ON "${t.runs}" (task_id, run_id);
      CREATE TABLE IF NOT EXISTS "${t.session_messages}" (
        run_id INTEGER NOT NULL, seq INTEGER NOT NULL, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,
        truncated INTEGER NOT NULL, bytes INTEGER NOT NULL, at TEXT NOT NULL, PRIMARY KEY (run_id, seq));
      CREATE TABLE IF NOT EXISTS "${t.agent_runtime}" (
        agent_id INTEGER PRIMARY KEY, status TEXT NOT NULL, stopped INTEGER NOT NULL, timeout_sec INTEGER, cooldown_sec INTEGER,
        daily_run_budget INTEGER, max_trigger_depth INTEGER, daily_token_budget INTEGER, current_run_id INTEGER, last_run_id INTEGER, last_session_id TEXT,
        last_started_at TEXT, last_finished_at TEXT, last_message_at TEXT, preview TEXT, project_id INTEGER, sandbox TEXT);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    const at = e.recordedAt;
    switch (e.type) {
      case 'RunQueued': {
        const d = e.data;
        yield run(
          q.queued,
          d.runId,
          d.agentId,
          d.ownerId,
          d.sessionId,
          d.taskId,
          d.goalId,
          d.depth,
          d.wake.source,
          JSON.stringify([d.wake]),
          d.reason,
          d.notBefore,
          at,
          at,
        );
        yield* ensureRuntime(t, d.agentId);
        return;
      }
      case 'RunRefused': {
        const d = e.data;
        const refused: RunResult = yield run(q.refusedQueued, d.gate, d.reason, at, d.runId);
        if (refused.changes === 0) {
          yield run(
            q.refusedNew,
            d.runId,
            d.agentId,
            d.ownerId,
            d.taskId,
            d.goalId,
            d.depth ?? 0,
            d.wake.source,
            JSON.stringify([d.wake]),
            d.gate,
            d.reason,
            at,
            at,
          );
        }
        return;
      }
      case 'RunWakeMerged':
        yield run(q.merge, { wake: JSON.stringify(e.data.wake), at, run: e.data.runId });
        return;
      case 'RunStarted': {
        const d = e.data;
        yield run(
          q.started,
          at,
          d.configHash,
          d.reservation.tokens,
          d.reservation.cents,
          d.traceId,
          d.timeoutSec,
          at,
          d.runId,
        );
        const session = yield* get<{ sessionId: string }>(q.sessionOf, d.runId);
        yield* runtimeRunStarted(t, { ...d, sessionId: session?.sessionId ?? null }, at);
        return;
      }
      case 'RunLaunched':
        yield run(q.launched, JSON.stringify(e.data.sandbox), at, e.data.runId);
        return;
      case 'RunTimedOut':
        yield run(q.timedOut, at, e.data.runId);
        return;
      case 'RunFinished':
        yield* applyRunFinished(t, e.data, at);
        return;
      case 'RunFailed':
        yield run(q.failed, e.data.reason, e.data.cancelledBy ?? null, e.data.cause ?? null, at, at, e.data.runId);
        // A cancelled run is no fault of the agent's: it goes back to idle, not to error.
        yield* runtimeRunEnded(t, e.data, e.data.cancelledBy ? 'idle' : 'error', at);
        return;
      case 'SessionMessageRecorded': {
        const d = e.data;
        yield run(q.message, d.runId, d.seq, d.sessionId, d.role, d.content, d.truncated ? 1 : 0, d.bytes, at);
        yield run(q.lastMessage, at, d.content.slice(0, 200), at, d.runId);
        const ofRun = yield* get<{ agentId: number }>(q.sessionOf, d.runId);
        if (ofRun) yield* runtimeMessage(t, ofRun.agentId, d.content.slice(0, 200), at);
        return;
      }
      case 'RuntimeConfigured':
      case 'AgentStopped':
      case 'AgentStarted':
      case 'AgentProjectSet':
      case 'SandboxConfigured':
        yield* applyRuntimeEvent(e, t);
        return;
      case 'CostRecorded':
        // report_usage during a run is part of the run's usage; the run's own usage is recorded as it streams and at its end.
        if (e.data.runId === undefined) return;
        yield run(e.data.source === 'report_usage' ? q.reported : q.spent, e.data.tokens, e.data.cents, e.data.runId);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};
