import type { Event } from '../engine/event.js';
import type { LimitKind, SandboxOverrides, SandboxProfile } from './sandbox.js';
import type { Runtime } from './principals.js';

/**
 * Runs and sessions: every agent process Colony starts — woken by the reactor or by
 * `execute_agent` — is a run on its own `run-<id>` stream. The stream tells the whole story: queued (or
 * refused by a gate, with the gate and the reason), wake-ups merged into it while it waited, started
 * (with its budget reservation), the transcript (each message, capped), timed out, finished or failed.
 * An agent's runtime settings and its stopped flag live on `runtime-<agentId>` (not part of the config
 * hash: they change how often an agent runs, not what it is).
 */
export type WakeSource =
  | 'goal_created'
  | 'task_assignment'
  | 'task_timer'
  | 'verification_requested'
  | 'verification_rejected'
  | 'children_done'
  | 'task_dispatched'
  | 'task_unblocked'
  | 'message_received'
  | 'probe'
  | 'goal_stalled'
  | 'manual'
  | 'execute_agent';
export const WAKE_SOURCES: readonly WakeSource[] = [
  'goal_created',
  'task_assignment',
  'task_timer',
  'verification_requested',
  'verification_rejected',
  'children_done',
  'task_dispatched',
  'task_unblocked',
  'message_received',
  'probe',
  'goal_stalled',
  'manual',
  'execute_agent',
];

/** The gates a wake-up passes, in order, plus the facts that make a run impossible. */
export type Gate =
  | 'stopped'
  | 'no_backend'
  | 'quarantine'
  | 'breaker'
  | 'budget'
  | 'goal_closed'
  | 'task_closed'
  | 'trigger_depth'
  | 'daily_run_budget'
  | 'daily_token_budget';

/** Why a run waits instead of starting now. */
export type QueueReason = 'agent_running' | 'cooldown';

export interface Wake {
  source: WakeSource;
  /** The messages that woke the agent (DMs, mentions, the probe's envelope), in order. */
  messageIds: number[];
  /**
   * execute_agent's or `colony agents wake --prompt`'s text, or what Colony asks of the agent for a task
   * fact (verification_requested, children_done, task_dispatched: the verdict, closing the parent, the
   * dispatched work); null otherwise.
   */
  prompt: string | null;
  /** Who asked: a principal key, or `system`. */
  by: string;
}

export type RunQueued = Event<
  'RunQueued',
  {
    runId: number;
    agentId: number;
    ownerId: number;
    sessionId: string;
    taskId: number | null;
    goalId: number | null;
    /** Trigger depth: 0 unless a run's own messages woke this agent (then that run's depth + 1). */
    depth: number;
    wake: Wake;
    reason: QueueReason | null;
    /** Not started before this time (cooldown); null: as soon as the agent is free. */
    notBefore: string | null;
  }
>;

export type RunWakeMerged = Event<'RunWakeMerged', { runId: number; wake: Wake }>;

export type RunRefused = Event<
  'RunRefused',
  {
    runId: number;
    agentId: number;
    ownerId: number;
    taskId: number | null;
    goalId: number | null;
    wake: Wake;
    /** The trigger depth the wake-up came with (see RunQueued). */
    depth: number;
    gate: Gate;
    reason: string;
  }
>;

export type RunStarted = Event<
  'RunStarted',
  {
    runId: number;
    agentId: number;
    configHash: string;
    /** What this run may spend, held against the goal's budget until it finishes. */
    reservation: { tokens: number; cents: number };
    traceId: string;
    timeoutSec: number;
  }
>;

/** The process was started, confined as its profile says (appended just before it starts). */
export type RunLaunched = Event<'RunLaunched', { runId: number; agentId: number; sandbox: SandboxProfile }>;

export type RunStatus = 'succeeded' | 'failed' | 'timed_out';

export type RunFinished = Event<
  'RunFinished',
  {
    runId: number;
    agentId: number;
    status: RunStatus;
    exitCode: number | null;
    signal: string | null;
    durationMs: number;
    tokensIn: number;
    tokensOut: number;
    /** Cost in cents from the run's final usage object (report_usage calls are recorded on the task as they happen). */
    costCents: number;
    /** The last 8 KiB of stdout and stderr, secret values masked. */
    outputTail: string;
    /** The limit the process ran into (absent before confinement existed). */
    limit?: LimitKind | null;
    /** The runtime that ran it (absent before runtimes: a command). */
    runtime?: Runtime;
    /** False when nothing said what it cost (costCents is then 0 but not free); absent: known (older runs). */
    costKnown?: boolean;
    billingLane?: BillingLane;
    /** The CLI's own session id, resumed by the agent's next run on the same task or goal. */
    cliSession?: string | null;
    /** Why a run whose process may have exited 0 failed, by the CLI's own result (runtime/adapters), and the words. */
    cause?: string | null;
    reason?: string | null;
  }
>;

/**
 * Who pays for a run: `api` (an API key: metered per token), `subscription` (a CLI login to a plan),
 * `unknown` (Colony cannot tell: a command, or nothing said). A $0 in the subscription or unknown lane is not free.
 */
export type BillingLane = 'api' | 'subscription' | 'unknown';

export type RunTimedOut = Event<'RunTimedOut', { runId: number; agentId: number; timeoutSec: number }>;

/**
 * A run that could not run to its end: the process did not start, or Colony stopped while it ran — or
 * someone cancelled it (an MCP `tasks/cancel` of the execute_agent task): then `cancelledBy` names who,
 * and the runtime that holds its process kills it when it sees this event.
 */
export type RunFailed = Event<
  'RunFailed',
  {
    runId: number;
    agentId: number;
    reason: string;
    cancelledBy?: string;
    /** What kind of failure, for the owner's one DM per agent and cause (e.g. `not_found`: its CLI is missing). */
    cause?: string;
  }
>;

export type SessionRole = 'user' | 'agent' | 'system';
export const SESSION_MESSAGE_CAP = 64 * 1024;

export type SessionMessageRecorded = Event<
  'SessionMessageRecorded',
  {
    runId: number;
    sessionId: string;
    seq: number;
    role: SessionRole;
    content: string;
    /** The content was cut at SESSION_MESSAGE_CAP bytes; `bytes` is the original size. */
    truncated: boolean;
    bytes: number;
  }
>;

export type RunEvent =
  | RunQueued
  | RunWakeMerged
  | RunRefused
  | RunStarted
  | RunLaunched
  | RunFinished
  | RunTimedOut
  | RunFailed
  | SessionMessageRecorded;

export interface RuntimeSettings {
  timeoutSec: number;
  cooldownSec: number;
  dailyRunBudget: number;
  maxTriggerDepth: number;
  /** Tokens the agent's runs may use in a day (UTC), across goals; the running one is stopped when it reaches it. */
  dailyTokenBudget: number;
}

/** An agent's own settings; null keeps the process-wide default. */
export type RuntimeOverrides = { [K in keyof RuntimeSettings]: number | null };

export type RuntimeConfigured = Event<'RuntimeConfigured', { agentId: number; settings: RuntimeOverrides; by: string }>;
export type AgentStopped = Event<'AgentStopped', { agentId: number; by: string; reason: string }>;
export type AgentStarted = Event<'AgentStarted', { agentId: number; by: string }>;
/** The project an agent works in (xylocopa's agent.project): its runs start in the project's directory. Null: none. */
export type AgentProjectSet = Event<'AgentProjectSet', { agentId: number; projectId: number | null; by: string }>;

/** How the agent's processes are confined (its own settings over the process-wide defaults). */
export type SandboxConfigured = Event<'SandboxConfigured', { agentId: number; settings: SandboxOverrides; by: string }>;

export type RuntimeEvent = RuntimeConfigured | AgentStopped | AgentStarted | AgentProjectSet | SandboxConfigured;

export const runStream = (runId: number): string => `run-${runId}`;
export const runtimeStream = (agentId: number): string => `runtime-${agentId}`;
