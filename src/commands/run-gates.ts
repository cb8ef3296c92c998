import { DomainError } from '../errors.js';
import type { Gate, QueueReason } from '../events/runs.js';
import type { Amount } from '../events/tasks.js';
import { budgetRefusal, NOTHING, type BudgetLine, type Refusal } from './task-budget.js';

/**
 * The gates a wake-up passes before it becomes a run, in order: the agent is stopped, it has no backend
 * command, it is quarantined, its task is closed, its goal's budget (a paused goal, or spend plus open
 * reservations at a budget), its goal is closed, the trigger depth, the daily run and token budgets. Then why a run
 * that passed them must still wait: the agent runs already, or it is in its cooldown. Pure: the facts
 * arrive in the command, read by the caller in the same transaction.
 */
export interface RunAgentFacts {
  agentId: number;
  name: string;
  /** Its backend command is set: without one it runs from outside (an MCP client of its own), never started by Colony. */
  hasBackend: boolean;
  stopped: boolean;
  quarantined: boolean;
  quarantineReason: string | null;
}

export interface GateFacts {
  agent: RunAgentFacts;
  /** The task the run is for, with its open reservation; null for a run on no task. */
  task: { taskId: number; status: string; reserved: Amount } | null;
  /** The run's goal and the budgets its work counts against (actions/budget.ts budgetLines); null for none. */
  goal: { goalId: number; status: string; pausedReason: string | null; budget: BudgetLine[] } | null;
  /** The open loop breaker of (agent, goal), if any (events/breakers.ts). */
  breaker?: { breaker: string; reason: string; goalId: number | null } | null;
  maxTriggerDepth: number;
  dailyRunBudget: number;
  /** Runs of the agent started since midnight (UTC). */
  ranToday: number;
  dailyTokenBudget: number;
  /** Tokens the agent's runs started since midnight (UTC) used, across goals. */
  tokensToday: number;
}

export interface WaitFacts {
  /** The agent has a run going. */
  running: boolean;
  /** When the agent's last run started; null if it never ran. */
  lastStart: string | null;
  cooldownSec: number;
}

export interface GateRefusal {
  gate: Gate;
  reason: string;
}

const CLOSED_TASK = new Set(['done', 'cancelled', 'failed', 'timeout']);

const noBackendMessage = (name: string): string =>
  `agent ${name} has no backend command, so Colony cannot run it (colony agents update ${name} --command …)`;

/** Asking for a run of an agent without a backend command is refused outright: Colony never starts it. */
export const noBackend = (agent: RunAgentFacts): DomainError =>
  new DomainError('ErrNoBackend', noBackendMessage(agent.name), { agent_id: agent.agentId });

/** The first gate that refuses, or null. `starting`: the run was queued, so its depth and the daily budget were checked then. */
export function gateRefusal(f: GateFacts, depth: number, starting: boolean): GateRefusal | null {
  const { agent } = f;
  if (agent.stopped)
    return {
      gate: 'stopped',
      reason: `agent ${agent.name} is stopped; the owner starts it again with colony agents start ${agent.name}`,
    };
  if (!agent.hasBackend) return { gate: 'no_backend', reason: noBackendMessage(agent.name) };
  if (agent.quarantined)
    return { gate: 'quarantine', reason: `agent quarantined: ${agent.quarantineReason ?? 'low reputation'}` };
  if (f.breaker) return breakerGate(f.breaker, agent.name);
  if (f.task && CLOSED_TASK.has(f.task.status))
    return {
      gate: 'task_closed',
      reason: `task ${f.task.taskId} is ${f.task.status}: there is nothing left to run for`,
    };
  const budget = budgetGate(f);
  if (budget) return budget;
  if (!starting && depth >= f.maxTriggerDepth)
    return {
      gate: 'trigger_depth',
      reason: `trigger depth ${depth} reached the agent's maximum of ${f.maxTriggerDepth}`,
    };
  if (f.ranToday >= f.dailyRunBudget)
    return {
      gate: 'daily_run_budget',
      reason: `agent ${agent.name} already ran ${f.ranToday} times today (daily run budget ${f.dailyRunBudget})`,
    };
  if (f.tokensToday >= f.dailyTokenBudget) return dailyTokens(agent.name, f.tokensToday, f.dailyTokenBudget);
  return null;
}

/** The agent used its day's tokens: refused until midnight (UTC); also why a running run is stopped. */
export const dailyTokens = (name: string, used: number, budget: number): GateRefusal => ({
  gate: 'daily_token_budget',
  reason: `agent ${name} used ${used} tokens today (daily token budget ${budget}); it runs again after midnight UTC, or when the owner raises it (colony agents update ${name} --daily-tokens N)`,
});

/** An open breaker pauses the agent on the run's goal until its owner lifts it. */
function breakerGate(b: NonNullable<GateFacts['breaker']>, name: string): GateRefusal {
  const goal = b.goalId === null ? 'work outside goals' : `goal ${b.goalId}`;
  const lift = `colony agents resume ${name} --goal ${b.goalId ?? 'none'}`;
  return {
    gate: 'breaker',
    reason: `agent ${name} is paused on ${goal} by the ${b.breaker} breaker (${b.reason}); the owner lifts it with ${lift} or Resume in the console`,
  };
}

/**
 * The budget the run would break (its open reservation, if it has a task, is not counted twice): a
 * goal-scope one pauses the goal, which the caller routes when the decider refused the run at the budget gate.
 */
export const budgetOf = (f: GateFacts): Refusal | null =>
  f.goal ? budgetRefusal(f.goal.budget, NOTHING, f.task?.reserved ?? NOTHING) : null;

function budgetGate(f: GateFacts): GateRefusal | null {
  const goal = f.goal;
  if (!goal) return null;
  if (goal.status === 'paused')
    return {
      gate: 'budget',
      reason: `goal ${goal.goalId} is paused${goal.pausedReason ? ` (${goal.pausedReason})` : ''}`,
    };
  if (goal.status === 'completed' || goal.status === 'cancelled')
    return { gate: 'goal_closed', reason: `goal ${goal.goalId} is ${goal.status}` };
  const r = budgetOf(f);
  if (!r) return null;
  return {
    gate: 'budget',
    reason: `${r.scope === 'goal' ? `goal ${goal.goalId}` : `task ${r.taskId}`} ${r.dimension} budget spent: ${r.committed} of ${r.budget}`,
  };
}

/** Why a run that passed its gates cannot start now, or null. An execute_agent run skips the cooldown. */
export function waitReason(
  w: WaitFacts,
  now: string,
  skipCooldown: boolean,
  notBefore: string | null,
): { reason: QueueReason; notBefore: string | null } | null {
  if (w.running) return { reason: 'agent_running', notBefore: null };
  if (skipCooldown) return null;
  if (notBefore && Date.parse(notBefore) > Date.parse(now)) return { reason: 'cooldown', notBefore };
  const cooldownMs = w.cooldownSec * 1000;
  if (w.lastStart && cooldownMs > 0 && Date.parse(w.lastStart) + cooldownMs > Date.parse(now))
    return { reason: 'cooldown', notBefore: new Date(Date.parse(w.lastStart) + cooldownMs).toISOString() };
  return null;
}
