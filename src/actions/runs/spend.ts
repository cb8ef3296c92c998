import type { App } from '../../app.js';
import { dailyTokens } from '../../commands/run-gates.js';
import { budgetRefusal, NOTHING } from '../../commands/task-budget.js';
import { taskDecider } from '../../commands/tasks.js';
import type { CommandOptions } from '../../engine/handle.js';
import { taskStream, type Amount } from '../../events/tasks.js';
import { getGoal } from '../../projections/goal-queries.js';
import { getAgent } from '../../projections/principal-queries.js';
import { getRun, tokensSince, type RunRow } from '../../projections/run-queries.js';
import { getTask, rootTasksOfGoal } from '../../projections/task-queries.js';
import { applySpend, applyTaskSpend, budgetLines, pauseForBudget } from '../budget.js';
import { midnight } from './gates.js';
import { runtimeSettings } from './settings.js';

/**
 * A run's own usage as spend, while it runs and when it ends. Spend is recorded on the run's task (or, for
 * a coordinator's run without one, on its goal's first root task) as CostRecorded with the run — and may
 * cross a budget and pause the goal in the same transaction, exactly as between runs. While it runs, the
 * usage streamed so far is recorded (at most once a second, runtime/run-meter.ts) and the budgets are
 * looked at again: when the goal's spend plus its open reservations reaches its budget (or a task's, or the
 * agent's tokens for the day), the run must stop, and the answer says why and how much room was left.
 */
const SYSTEM: CommandOptions = { actor: 'system' };

export interface RunStop {
  cause: 'budget' | 'daily_token_budget';
  reason: string;
}

/** What the run may still spend before a budget stops it (Infinity: nothing caps that dimension). */
export type Headroom = Amount;

export interface Metered {
  stop: RunStop | null;
  headroom: Headroom;
}

/** The run's task to record its spend on; null when the run has none and its goal has no task. */
export function spendTaskOf(app: App, run: RunRow): number | null {
  if (run.taskId !== null) return run.taskId;
  if (run.goalId === null) return null;
  return rootTasksOfGoal(app.engine.db, run.goalId)[0]?.taskId ?? null;
}

/** `amount` as the run's spend on `taskId`, and the budgets' reaction to it (nothing is written for nothing spent). */
export function recordRunSpend(
  app: App,
  run: RunRow,
  taskId: number,
  amount: Amount,
  note: string,
  actor: CommandOptions,
) {
  const db = app.engine.db;
  const { events } = app.engine.handle(
    taskDecider,
    taskStream(taskId),
    {
      type: 'RecordCost',
      by: { key: `agent-${run.agentId}`, name: getAgent(db, run.agentId)?.name ?? 'agent' },
      tokens: amount.tokens,
      cents: amount.cents,
      note,
      source: 'run',
      runId: run.runId,
      reporter: null,
    },
    actor,
  );
  if (events.length === 0) return;
  applyTaskSpend(app, taskId, actor);
  const goalId = getTask(db, taskId)!.goalId;
  if (goalId !== null) applySpend(app, getGoal(db, goalId)!, actor);
}

/**
 * Usage streamed from a running run: recorded, then the budgets decide whether it may go on. A goal whose
 * spend plus open reservations reached its budget is paused (one alert, the owner's DM) if the spend itself
 * did not already pause it. Null when the run is no longer running (its end is being recorded).
 */
export function recordStreamedSpend(app: App, runId: number, amount: Amount, soFar: Amount): Metered | null {
  const { value } = app.engine.transact(SYSTEM, () => {
    const run = getRun(app.engine.db, runId);
    if (!run || run.status !== 'running') return null;
    const on = spendTaskOf(app, run);
    if (on !== null && (amount.tokens > 0 || amount.cents > 0))
      recordRunSpend(app, run, on, amount, `run ${runId} (so far)`, SYSTEM);
    return budgetsAfter(app, getRun(app.engine.db, runId)!, soFar);
  });
  return value ?? null;
}

/** `soFar`: the run's whole usage until now, recorded or not (a run with no task to record it on still counts for the day). */
function budgetsAfter(app: App, run: RunRow, soFar: Amount): Metered {
  const db = app.engine.db;
  const headroom: Headroom = { tokens: Infinity, cents: Infinity };
  const settings = runtimeSettings(db, run.agentId);
  const since = tokensSince(db, run.agentId, midnight(app.engine.clock().toISOString()));
  const today =
    since - Math.max(run.spentTokens, run.tokensIn + run.tokensOut) + Math.max(run.spentTokens, soFar.tokens);
  headroom.tokens = settings.dailyTokenBudget - today;
  const goal = run.goalId === null ? null : getGoal(db, run.goalId);
  if (goal) {
    if (goal.status === 'paused' && goal.pausedReason?.startsWith('budget'))
      return {
        stop: { cause: 'budget', reason: `goal ${goal.goalId} is paused at its budget (${goal.pausedReason})` },
        headroom,
      };
    const task = run.taskId === null ? null : getTask(db, run.taskId);
    const lines = budgetLines(app, goal, task);
    const r = budgetRefusal(lines, NOTHING);
    if (r) {
      const name = getAgent(db, run.agentId)?.name ?? 'agent';
      if (r.scope === 'goal') pauseForBudget(app, goal, r, { key: `agent-${run.agentId}`, name }, SYSTEM);
      const what = r.scope === 'goal' ? `goal ${goal.goalId}` : `task ${r.taskId}`;
      const reason = `${what} reached its ${r.dimension} budget while the run went on: ${r.committed} of ${r.budget} spent or reserved`;
      return { stop: { cause: 'budget', reason }, headroom };
    }
    for (const line of lines)
      for (const d of ['tokens', 'cents'] as const) {
        const cap = line.budget[d];
        if (cap !== null && cap > 0) headroom[d] = Math.min(headroom[d], cap - line.committed[d]);
      }
  }
  if (today >= settings.dailyTokenBudget) {
    const name = getAgent(db, run.agentId)?.name ?? `#${run.agentId}`;
    return {
      stop: { cause: 'daily_token_budget', reason: dailyTokens(name, today, settings.dailyTokenBudget).reason },
      headroom,
    };
  }
  return { stop: null, headroom };
}
