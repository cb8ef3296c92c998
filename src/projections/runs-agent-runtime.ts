import type { StoredEvent } from '../engine/event.js';
import { sqlFor, type TableNames } from '../engine/projection.js';
import { run, type Steps } from '../engine/projection-sql.js';
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
  settings: `UPDATE "${t.agent_runtime}" SET timeout_sec = ?, cooldown_sec = ?, daily_run_budget = ?, max_trigger_depth = ?,
    daily_token_budget = ? WHERE agent_id = ?`,
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
export function* ensureRuntime(t: TableNames<T>, agentId: number): Steps {
  yield run(sql(t).row, agentId);
}

/** The owner's settings, stop and start, and the project and confinement of an agent. */
export function* applyRuntimeEvent(e: StoredEvent<RuntimeEvent>, t: TableNames<T>): Steps {
  const q = sql(t);
  yield* ensureRuntime(t, e.data.agentId);
  switch (e.type) {
    case 'RuntimeConfigured': {
      const s = e.data.settings;
      // Settings recorded before the daily token budget existed read as the default for it.
      const tokens = s.dailyTokenBudget ?? null;
      yield run(q.settings, s.timeoutSec, s.cooldownSec, s.dailyRunBudget, s.maxTriggerDepth, tokens, e.data.agentId);
      return;
    }
    case 'AgentStopped':
    case 'AgentStarted': {
      const stopped = e.type === 'AgentStopped' ? 1 : 0;
      yield run(q.stopped, stopped, stopped, e.data.agentId);
      return;
    }
    case 'AgentProjectSet':
      yield run(q.project, e.data.projectId, e.data.agentId);
      return;
    case 'SandboxConfigured':
      yield run(q.sandbox, JSON.stringify(e.data.settings), e.data.agentId);
      return;
    default: {
      const never: never = e;
      return never;
    }
  }
}

/** A run of the agent started: it is executing (or stays stopped), and this is its latest run and session. */
export function* runtimeRunStarted(
  t: TableNames<T>,
  started: { agentId: number; runId: number; sessionId: string | null },
  at: string,
): Steps {
  yield* ensureRuntime(t, started.agentId);
  yield run(sql(t).running, started.runId, started.runId, started.sessionId, at, started.agentId);
}

/** The agent's current run ended: idle or error (or still stopped). The end of any other run changes nothing. */
export function* runtimeRunEnded(
  t: TableNames<T>,
  ended: { agentId: number; runId: number },
  status: 'idle' | 'error',
  at: string,
): Steps {
  yield run(sql(t).ended, status, at, ended.agentId, ended.runId);
}

/** The agent's last session message: when, and its first 200 characters. */
export function* runtimeMessage(t: TableNames<T>, agentId: number, preview: string, at: string): Steps {
  yield run(sql(t).message, at, preview, agentId);
}
