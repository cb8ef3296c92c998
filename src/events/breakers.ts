import type { Event } from '../engine/event.js';

/**
 * Loop and cycle breakers: an agent caught looping is paused for one goal (goalId null: its work outside
 * goals) until its owner lifts the breaker. Each trip names what tripped it and the evidence from the log
 * (the runs, the failed calls, the tasks of a cycle) with the threshold it crossed. While a breaker is
 * open, the run gate `breaker` refuses the agent's runs on that goal; nothing else is failed or refused.
 * Trips, resets and the agent's own thresholds live on the agent's `breaker-<agentId>` stream.
 *
 * - no_progress: N runs on the goal in a row ended without a claim, hand-in, message, proposal or verdict;
 * - repeated_failure: the same tool call (name and argument digest) failed the same way M times in a row;
 * - wake_depth: a wake-up came past the agent's max trigger depth (agents waking each other);
 * - dependency_cycle: the agent's write would have closed a task-dependency cycle;
 * - wake_rate: probes and task timers would wake the agent more often than its hourly cap.
 */
export type BreakerKind = 'no_progress' | 'repeated_failure' | 'wake_depth' | 'dependency_cycle' | 'wake_rate';
export const BREAKER_KINDS: readonly BreakerKind[] = [
  'no_progress',
  'repeated_failure',
  'wake_depth',
  'dependency_cycle',
  'wake_rate',
];

/** One failed tool call of a repeated_failure trip: the tool, its arguments' digest (never the arguments), the code. */
export interface FailedCall {
  tool: string;
  argsDigest: string;
  errorCode: string;
  at: string;
}

export interface BreakerEvidence {
  /** The runs that tripped it (oldest first); may be empty (a failing call outside any run). */
  runIds: number[];
  calls?: FailedCall[];
  /** The tasks of a dependency cycle, in cycle order. */
  taskIds?: number[];
  /** The threshold that was crossed (runs, failures, depth, wakes per hour; 1 for a cycle). */
  threshold: number;
}

export type BreakerTripped = Event<
  'BreakerTripped',
  {
    agentId: number;
    ownerId: number;
    goalId: number | null;
    breaker: BreakerKind;
    reason: string;
    evidence: BreakerEvidence;
    /** Who tripped it: `system`, or the principal whose write was refused (a cycle). */
    by: string;
  }
>;

export type BreakerReset = Event<'BreakerReset', { agentId: number; goalId: number | null; by: string }>;

/** The agent's own breaker thresholds; 0 turns a detector off. */
export interface BreakerSettings {
  /** Runs in a row on one goal that change nothing before no_progress trips. */
  maxRunsWithoutProgress: number;
  /** Failures in a row of the same call, the same way, before repeated_failure trips. */
  maxRepeatedFailures: number;
  /** Wake-ups from probes and task timers in any hour before wake_rate trips. */
  maxWakesPerHour: number;
}

/** An agent's own thresholds; null keeps the process-wide default. */
export type BreakerOverrides = { [K in keyof BreakerSettings]: number | null };

export type BreakersConfigured = Event<
  'BreakersConfigured',
  { agentId: number; ownerId: number; settings: BreakerOverrides; by: string }
>;

export type BreakerEvent = BreakerTripped | BreakerReset | BreakersConfigured;

export const breakerStream = (agentId: number): string => `breaker-${agentId}`;
