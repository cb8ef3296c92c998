import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { applySteps, get, type Steps } from '../engine/projection-sql.js';
import type { RunCliFacts } from './cli-session-queries.js';
import type { Gate, QueueReason, RunStatus, Wake, WakeSource } from '../events/runs.js';
import type { LimitKind, SandboxOverrides, SandboxProfile } from '../events/sandbox.js';

/** Reads over the runs projection (live names). What the reactor's sweep reads is in sweep-queries.ts. */
export type RunRowStatus = 'queued' | 'running' | 'refused' | RunStatus;
export interface RunRow extends RunCliFacts {
  runId: number;
  agentId: number;
  ownerId: number;
  sessionId: string | null;
  taskId: number | null;
  goalId: number | null;
  depth: number;
  source: WakeSource;
  wakes: Wake[];
  status: RunRowStatus;
  queueReason: QueueReason | null;
  notBefore: string | null;
  gate: Gate | null;
  reason: string | null;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  configHash: string | null;
  traceId: string | null;
  timeoutSec: number | null;
  timedOut: boolean;
  exitCode: number | null;
  signal: string | null;
  durationMs: number | null;
  tokensIn: number;
  tokensOut: number;
  costCents: number;
  reportedTokens: number;
  reportedCents: number;
  /** The run's own usage as Colony recorded it (as it streamed, and at its end). */
  spentTokens: number;
  spentCents: number;
  reservedTokens: number;
  reservedCents: number;
  outputTail: string | null;
  lastMessageAt: string | null;
  preview: string | null;
  updatedAt: string;
  /** The confinement it ran under (null: not launched, or launched before confinement existed) and the limit it ran into. */
  sandbox: SandboxProfile | null;
  limitHit: LimitKind | null;
  /** Who cancelled it (status failed), when it was cancelled rather than failing on its own. */
  cancelledBy: string | null;
}
export interface AgentRuntimeRow {
  agentId: number;
  status: 'idle' | 'executing' | 'error' | 'stopped';
  stopped: boolean;
  timeoutSec: number | null;
  cooldownSec: number | null;
  dailyRunBudget: number | null;
  maxTriggerDepth: number | null;
  dailyTokenBudget: number | null;
  currentRunId: number | null;
  lastRunId: number | null;
  lastSessionId: string | null;
  lastStartedAt: string | null;
  lastFinishedAt: string | null;
  lastMessageAt: string | null;
  preview: string | null;
  projectId: number | null;
  /** Its own confinement settings (null: the process-wide defaults). */
  sandbox: SandboxOverrides | null;
}

const RUN = `SELECT run_id AS runId, agent_id AS agentId, owner_id AS ownerId, session_id AS sessionId, task_id AS taskId, goal_id AS goalId, depth,
  source, wakes, status, queue_reason AS queueReason, not_before AS notBefore, gate, reason, queued_at AS queuedAt, started_at AS startedAt,
  finished_at AS finishedAt, config_hash AS configHash, trace_id AS traceId, timeout_sec AS timeoutSec, timed_out AS timedOut, exit_code AS exitCode,
  signal, duration_ms AS durationMs, tokens_in AS tokensIn, tokens_out AS tokensOut, cost_cents AS costCents, reported_tokens AS reportedTokens, reported_cents AS reportedCents, spent_tokens AS spentTokens, spent_cents AS spentCents, reserved_tokens AS reservedTokens,
  reserved_cents AS reservedCents, output_tail AS outputTail, last_message_at AS lastMessageAt, preview, updated_at AS updatedAt, sandbox, limit_hit AS limitHit, cancelled_by AS cancelledBy,
  runtime, cost_known AS costKnown, billing_lane AS billingLane, cli_session AS cliSession, cause FROM runs`;
const toRun = (r: Record<string, unknown> | undefined): RunRow | null =>
  r
    ? ({
        ...r,
        wakes: JSON.parse(r.wakes as string),
        timedOut: r.timedOut === 1,
        costKnown: r.costKnown !== 0,
        sandbox: r.sandbox ? JSON.parse(r.sandbox as string) : null,
      } as unknown as RunRow)
    : null;
const many = (rows: unknown[]): RunRow[] => rows.map((r) => toRun(r as never)!);

export const getRun = (db: Database, runId: number): RunRow | null =>
  toRun(prepared(db, `${RUN} WHERE run_id = ?`).get(runId) as never);
export const runBySession = (db: Database, sessionId: string): RunRow | null =>
  toRun(prepared(db, `${RUN} WHERE session_id = ?`).get(sessionId) as never);
/**
 * The queued run a new wake-up of (agent, task, goal) merges into: a burst of wake-ups starts one run, not
 * many. The goal is part of the key: a run's prompt is about its own goal, so a wake about another goal
 * merged into it would be lost (two goals created within a second left the second in draft for ever).
 * A task implies its goal; `goalId` counts for task-less wakes only.
 */
export const queuedRunFor = (
  db: Database,
  agentId: number,
  taskId: number | null,
  goalId: number | null = null,
): RunRow | null =>
  toRun(
    prepared(
      db,
      `${RUN} WHERE agent_id = ? AND status = 'queued' AND task_id IS ? AND (task_id IS NOT NULL OR goal_id IS ?) ORDER BY run_id LIMIT 1`,
    ).get(agentId, taskId, goalId) as never,
  );
export const queuedRunsOf = (db: Database, agentId: number): RunRow[] =>
  many(prepared(db, `${RUN} WHERE agent_id = ? AND status = 'queued' ORDER BY run_id`).all(agentId));
export function* readRunningRun(agentId: number): Steps<RunRow | null> {
  return toRun(yield* get(`${RUN} WHERE agent_id = ? AND status = 'running' ORDER BY run_id LIMIT 1`, agentId));
}
export const runningRunOf = (db: Database, agentId: number): RunRow | null => applySteps(db, readRunningRun(agentId));
export const runsInStatus = (db: Database, status: RunRowStatus): RunRow[] =>
  many(prepared(db, `${RUN} WHERE status = ? ORDER BY run_id`).all(status));
export const runsStartedSince = (db: Database, agentId: number, since: string): number =>
  (
    prepared(db, 'SELECT count(*) AS n FROM runs WHERE agent_id = ? AND started_at >= ?').get(agentId, since) as {
      n: number;
    }
  ).n;
/** Tokens the agent's runs started since `since` used: each one's own usage (as recorded, else its final figures) and reports. */
export const tokensSince = (db: Database, agentId: number, since: string): number =>
  (
    prepared(
      db,
      `SELECT coalesce(sum(max(spent_tokens, tokens_in + tokens_out) + reported_tokens), 0) AS n FROM runs
        WHERE agent_id = ? AND started_at >= ?`,
    ).get(agentId, since) as { n: number }
  ).n;
export const lastStartOf = (db: Database, agentId: number): string | null =>
  (prepared(db, 'SELECT max(started_at) AS at FROM runs WHERE agent_id = ?').get(agentId) as { at: string | null }).at;
export interface RunFilter {
  agentId?: number | null;
  goalId?: number | null;
  ownerId?: number | null;
  status?: RunRowStatus | null;
  limit: number;
}
export function listRuns(db: Database, f: RunFilter): RunRow[] {
  return many(
    prepared(
      db,
      `${RUN} WHERE (@agent IS NULL OR agent_id = @agent) AND (@goal IS NULL OR goal_id = @goal)
    AND (@owner IS NULL OR owner_id = @owner) AND (@status IS NULL OR status = @status) ORDER BY run_id DESC LIMIT @limit`,
    ).all({
      agent: f.agentId ?? null,
      goal: f.goalId ?? null,
      owner: f.ownerId ?? null,
      status: f.status ?? null,
      limit: f.limit,
    }),
  );
}
export const runsOfGoal = (db: Database, goalId: number): RunRow[] =>
  many(prepared(db, `${RUN} WHERE goal_id = ? ORDER BY run_id`).all(goalId));

const RUNTIME = `SELECT agent_id AS agentId, status, stopped, timeout_sec AS timeoutSec, cooldown_sec AS cooldownSec, daily_run_budget AS dailyRunBudget,
  max_trigger_depth AS maxTriggerDepth, daily_token_budget AS dailyTokenBudget, current_run_id AS currentRunId, last_run_id AS lastRunId, last_session_id AS lastSessionId,
  last_started_at AS lastStartedAt, last_finished_at AS lastFinishedAt, last_message_at AS lastMessageAt, preview, project_id AS projectId, sandbox FROM agent_runtime`;
/** An agent's runtime row; an agent that never ran reads as idle with default settings (nulls). */
export function runtimeOf(db: Database, agentId: number): AgentRuntimeRow {
  const r = prepared(db, `${RUNTIME} WHERE agent_id = ?`).get(agentId) as Record<string, unknown> | undefined;
  if (!r) {
    return {
      agentId,
      status: 'idle',
      stopped: false,
      timeoutSec: null,
      cooldownSec: null,
      dailyRunBudget: null,
      maxTriggerDepth: null,
      dailyTokenBudget: null,
      currentRunId: null,
      lastRunId: null,
      lastSessionId: null,
      lastStartedAt: null,
      lastFinishedAt: null,
      lastMessageAt: null,
      preview: null,
      projectId: null,
      sandbox: null,
    };
  }
  return {
    ...r,
    stopped: r.stopped === 1,
    sandbox: r.sandbox ? JSON.parse(r.sandbox as string) : null,
  } as unknown as AgentRuntimeRow;
}
