import type { App } from '../../app.js';
import { DomainError } from '../../errors.js';
import type { Gate, QueueReason } from '../../events/runs.js';
import { getGoal, goalTotals, type GoalRow } from '../../projections/goal-queries.js';
import { type TaskRow } from '../../projections/task-queries.js';
import type { AgentRow } from '../../projections/principals.js';
import { lastStartOf, runningRunOf, runsStartedSince } from '../../projections/run-queries.js';
import { budgetRefusal, pauseForBudget, type Refusal } from '../budget.js';
import { runtimeSettings } from './settings.js';
import { type CommandOptions } from '../../engine/handle.js';

/**
 * The gates a wake-up passes before it becomes a run, in order (DESIGN §3.14): stopped, no backend,
 * quarantine, task closed, budget (a paused goal, or spend + reservations at the budget — which pauses
 * the goal, §3.7), goal closed, trigger depth, daily run budget. Then why a run that passed them must
 * still wait: the agent runs already, or it is in its cooldown.
 */
export interface GateRefusal {
  gate: Gate;
  reason: string;
}
const CLOSED_TASK = new Set(['done', 'cancelled', 'failed', 'timeout']);

/** An agent without a backend command is run from outside (an MCP client of its own): Colony never starts it. */
export const noBackend = (agent: AgentRow): DomainError =>
  new DomainError(
    'ErrNoBackend',
    `agent ${agent.name} has no backend command, so Colony cannot run it (colony agents update ${agent.name} --command …)`,
    { agent_id: agent.agentId },
  );

/** The gates in order (DESIGN §3.14); a budget refusal pauses the goal (§3.7). `starting`: the depth and daily checks were passed when queued. */
export function gateRefusal(
  app: App,
  agent: AgentRow,
  goalId: number | null,
  task: TaskRow | null,
  depth: number,
  actor: CommandOptions,
  starting = false,
): GateRefusal | null {
  const db = app.engine.db;
  const settings = runtimeSettings(db, agent.agentId);
  if (settings.stopped)
    return {
      gate: 'stopped',
      reason: `agent ${agent.name} is stopped; the owner starts it again with colony agents start ${agent.name}`,
    };
  if (!agent.command) return { gate: 'no_backend', reason: noBackend(agent).message };
  if (agent.quarantined)
    return { gate: 'quarantine', reason: `agent quarantined: ${agent.quarantineReason ?? 'low reputation'}` };
  if (task && CLOSED_TASK.has(task.status))
    return { gate: 'task_closed', reason: `task ${task.taskId} is ${task.status}: there is nothing left to run for` };
  const goal = goalId === null ? null : getGoal(db, goalId);
  const budget = goal ? budgetGate(app, goal, task, actor) : null;
  if (budget) return budget;
  if (!starting && depth >= settings.maxTriggerDepth)
    return {
      gate: 'trigger_depth',
      reason: `trigger depth ${depth} reached the agent's maximum of ${settings.maxTriggerDepth}`,
    };
  const today = `${app.engine.clock().toISOString().slice(0, 10)}T00:00:00.000Z`;
  const ran = runsStartedSince(db, agent.agentId, today);
  if (ran >= settings.dailyRunBudget)
    return {
      gate: 'daily_run_budget',
      reason: `agent ${agent.name} already ran ${ran} times today (daily run budget ${settings.dailyRunBudget})`,
    };
  return null;
}

function budgetGate(app: App, goal: GoalRow, task: TaskRow | null, actor: CommandOptions): GateRefusal | null {
  if (goal.status === 'paused')
    return {
      gate: 'budget',
      reason: `goal ${goal.goalId} is paused${goal.pausedReason ? ` (${goal.pausedReason})` : ''}`,
    };
  if (goal.status === 'completed' || goal.status === 'cancelled')
    return { gate: 'goal_closed', reason: `goal ${goal.goalId} is ${goal.status}` };
  const refusal = task ? budgetRefusal(app, goal, task, { tokens: 0, cents: 0 }) : goalLevelRefusal(app, goal);
  if (!refusal) return null;
  if (refusal.scope === 'goal') pauseForBudget(app, goal, refusal, { key: 'system', name: 'system' }, actor);
  return {
    gate: 'budget',
    reason: `${refusal.scope === 'goal' ? `goal ${goal.goalId}` : `task ${refusal.taskId}`} ${refusal.dimension} budget spent: ${refusal.committed} of ${refusal.budget}`,
  };
}

/** A run with no task (the coordinator's): refused once spend and open reservations reach the goal's budget. */
function goalLevelRefusal(app: App, goal: GoalRow): Refusal | null {
  const t = goalTotals(app.engine.db, goal.goalId);
  const committed = { tokens: t.spentTokens + t.reservedTokens, cents: t.spentCents + t.reservedCents };
  for (const [dimension, cap] of [
    ['tokens', goal.budgetTokens],
    ['cents', goal.budgetCents],
  ] as const) {
    if (cap !== null && cap > 0 && committed[dimension] >= cap)
      return { scope: 'goal', taskId: 0, dimension, committed: committed[dimension], requested: 0, budget: cap };
  }
  return null;
}

/** Why a run cannot start now (the agent runs already, or is in its cooldown), or null. execute_agent skips the cooldown. */
export function queueReason(
  app: App,
  agentId: number,
  now: string,
  skipCooldown: boolean,
  notBefore: string | null = null,
): { reason: QueueReason; notBefore: string | null } | null {
  if (runningRunOf(app.engine.db, agentId)) return { reason: 'agent_running', notBefore: null };
  if (skipCooldown) return null;
  if (notBefore && Date.parse(notBefore) > Date.parse(now)) return { reason: 'cooldown', notBefore };
  const last = lastStartOf(app.engine.db, agentId);
  const cooldownMs = runtimeSettings(app.engine.db, agentId).cooldownSec * 1000;
  if (last && cooldownMs > 0 && Date.parse(last) + cooldownMs > Date.parse(now)) {
    return { reason: 'cooldown', notBefore: new Date(Date.parse(last) + cooldownMs).toISOString() };
  }
  return null;
}
