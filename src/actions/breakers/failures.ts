import type { App } from '../../app.js';
import type { FailedCall } from '../../events/breakers.js';
import { getAgent } from '../../projections/principal-queries.js';
import { getGoal } from '../../projections/goal-queries.js';
import { runningRunOf } from '../../projections/run-queries.js';
import { tripBreaker } from '../breakers.js';
import { breakerSettings } from './settings.js';

/**
 * repeated_failure: the same tool call — its name and its arguments' digest — failing with the same error
 * code M times in a row for one agent, with no success of that call in between. Fed by the MCP call
 * pipeline after each call's audit row (mcp/call-pipeline.ts): a success costs one Map lookup, only a
 * failure reads anything. The streaks live in this process (a restart starts them again); the trip is an
 * event like any other. The goal paused is the one of the agent's running run, else the goal the call
 * names (`goal_id`, if it is a goal of the agent's tenant), else none.
 */
interface Streak {
  code: string;
  count: number;
  /** The newest calls, at most EVIDENCE_CALLS of them. */
  calls: FailedCall[];
}

const EVIDENCE_CALLS = 20;
/** Streaks kept at most; the oldest go first (a Map keeps insertion order). */
const MAX_STREAKS = 10_000;

export class FailureWatch {
  private readonly streaks = new Map<string, Streak>();

  constructor(private readonly app: App) {}

  /** A call that succeeded ends its streak. */
  succeeded(agentId: number, tool: string, argsDigest: string): void {
    if (this.streaks.size > 0) this.streaks.delete(`${agentId}\0${tool}\0${argsDigest}`);
  }

  /** A call that failed: one more in its streak, or the first of a new one when the code changed. */
  failed(agentId: number, call: FailedCall, goalArg: unknown): void {
    const key = `${agentId}\0${call.tool}\0${call.argsDigest}`;
    let streak = this.streaks.get(key);
    if (!streak || streak.code !== call.errorCode) {
      this.streaks.delete(key);
      if (this.streaks.size >= MAX_STREAKS) this.streaks.delete(this.streaks.keys().next().value!);
      streak = { code: call.errorCode, count: 0, calls: [] };
      this.streaks.set(key, streak);
    }
    streak.count += 1;
    streak.calls = [...streak.calls, call].slice(-EVIDENCE_CALLS);
    const m = breakerSettings(this.app.engine.db, agentId).maxRepeatedFailures;
    if (m === 0 || streak.count < m) return;
    this.streaks.delete(key);
    this.trip(agentId, streak, m, goalArg);
  }

  private trip(agentId: number, streak: Streak, m: number, goalArg: unknown): void {
    const db = this.app.engine.db;
    const agent = getAgent(db, agentId);
    if (!agent) return;
    const running = runningRunOf(db, agentId);
    const named = typeof goalArg === 'number' && getGoal(db, goalArg)?.ownerId === agent.ownerId ? goalArg : null;
    const goalId = running ? running.goalId : named;
    const tool = streak.calls[0]!.tool;
    tripBreaker(this.app, {
      agentId,
      goalId,
      breaker: 'repeated_failure',
      reason: `${tool} failed ${streak.count} times in a row with the same arguments and the same error (${streak.code})`,
      evidence: { runIds: running ? [running.runId] : [], calls: streak.calls, threshold: m },
    });
  }
}

const watches = new WeakMap<App, FailureWatch>();

/** The app's one watch: every MCP session of the process feeds the same streaks. */
export function failureWatchOf(app: App): FailureWatch {
  let watch = watches.get(app);
  if (!watch) watches.set(app, (watch = new FailureWatch(app)));
  return watch;
}

/** One agent's tool call as the audit trail records it: a success ends its streak, an error or a refusal adds to it. */
export function watchCall(
  app: App,
  agentId: number,
  call: { tool: string; argsDigest: string; outcome: string; errorCode: string | null; at: string; goalArg: unknown },
): void {
  const watch = failureWatchOf(app);
  if (call.outcome === 'success') watch.succeeded(agentId, call.tool, call.argsDigest);
  else if ((call.outcome === 'error' || call.outcome === 'blocked') && call.errorCode !== null)
    watch.failed(
      agentId,
      { tool: call.tool, argsDigest: call.argsDigest, errorCode: call.errorCode, at: call.at },
      call.goalArg,
    );
}
