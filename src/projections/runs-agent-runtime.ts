import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { StoredEvent } from '../engine/event.js';
import { sqlFor, type TableNames } from '../engine/projection.js';
import type { RuntimeEvent } from '../events/runs.js';

/**
 * The runs projection's `agent_runtime` table (its DDL is in runs.ts): each agent's runtime — status,
 * settings, project, confinement, last activity. An agent's status follows its runs — executing while one
 * runs, idle after a success or a cancellation, error after a failure or a timeout — unless the owner
 * stopped it. Its row appears with the agent's first runtime fact.
 */
type T = 'agent_runtime';

const sql = sqlFor((t: Record<T, string>) => ({
  row: `INSERT OR IGNORE INTO "${t.agent_runtime}" (agent_id, status, stopped) VALUES (?, 'idle', 0)`,
  settings: `UPDATE "${t.agent_runtime}" SET timeout_sec = ?, cooldown_sec = ?, daily_run_budget = ?, max_trigger_depth = ? WHERE agent_id = ?`,
  stopped: `UPDATE "${t.agent_runtime}" SET stopped = ?, status = CASE WHEN ? = 1 THEN 'stopped' WHEN current_run_id IS NOT NULL THEN 'executing' ELSE 'idle' END
    WHERE agent_id = ?`,
  running: `UPDATE "${t.agent_runtime}" SET status = CASE WHEN stopped = 1 THEN 'stopped' ELSE 'executing' END, current_run_id = ?, last_run_id = ?,
    last_session_id = ?, last_started_at = ? WHERE agent_id = ?`,
  ended: `UPDATE "${t.agent_runtime}" SET status = CASE WHEN stopped = 1 THEN 'stopped' ELSE ? END, current_run_id = NULL, last_finished_at = ?
    WHERE agent_id = ? AND current_run_id = ?`,
  project: `UPDATE "${t.agent_runtime}" SET project_id = ? WHERE agent_id = ?`,
  message: `UPDATE "${t.agent_runtime}" SET last_message_at = ?, preview = ? WHERE agent_id = ?`,
  sandbox: `UPDATE "${t.agent_runtime}" SET sandbox = ? WHERE agent_id = ?`,
}));

/** The agent's runtime row, idle and not stopped, unless it has one. */
export function ensureRuntime(db: Database, t: TableNames<T>, agentId: number): void {
  prepared(db, sql(t).row).run(agentId);
}

/** The owner's settings, stop and start, and the project and confinement of an agent. */
export function applyRuntimeEvent(db: Database, e: StoredEvent<RuntimeEvent>, t: TableNames<T>): void {
  const q = sql(t);
  ensureRuntime(db, t, e.data.agentId);
  switch (e.type) {
    case 'RuntimeConfigured': {
      const s = e.data.settings;
      prepared(db, q.settings).run(s.timeoutSec, s.cooldownSec, s.dailyRunBudget, s.maxTriggerDepth, e.data.agentId);
      return;
    }
    case 'AgentStopped':
    case 'AgentStarted': {
      const stopped = e.type === 'AgentStopped' ? 1 : 0;
      prepared(db, q.stopped).run(stopped, stopped, e.data.agentId);
      return;
    }
    case 'AgentProjectSet':
      prepared(db, q.project).run(e.data.projectId, e.data.agentId);
      return;
    case 'SandboxConfigured':
      prepared(db, q.sandbox).run(JSON.stringify(e.data.settings), e.data.agentId);
      return;
    default: {
      const never: never = e;
      return never;
    }
  }
}

/** A run of the agent started: it is executing (or stays stopped), and this is its latest run and session. */
export function runtimeRunStarted(
  db: Database,
  t: TableNames<T>,
  run: { agentId: number; runId: number; sessionId: string | null },
  at: string,
): void {
  ensureRuntime(db, t, run.agentId);
  prepared(db, sql(t).running).run(run.runId, run.runId, run.sessionId, at, run.agentId);
}

/** The agent's current run ended: idle or error (or still stopped). The end of any other run changes nothing. */
export function runtimeRunEnded(
  db: Database,
  t: TableNames<T>,
  run: { agentId: number; runId: number },
  status: 'idle' | 'error',
  at: string,
): void {
  prepared(db, sql(t).ended).run(status, at, run.agentId, run.runId);
}

/** The agent's last session message: when, and its first 200 characters. */
export function runtimeMessage(db: Database, t: TableNames<T>, agentId: number, preview: string, at: string): void {
  prepared(db, sql(t).message).run(at, preview, agentId);
}
