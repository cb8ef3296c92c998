import type { App } from '../../app.js';
import { budgetOf, type GateFacts, type RunAgentFacts, type WaitFacts } from '../../commands/run-gates.js';
import type { RunEvent } from '../../events/runs.js';
import type { StoredEvent } from '../../engine/event.js';
import { getGoal } from '../../projections/goal-queries.js';
import { type TaskRow } from '../../projections/task-queries.js';
import type { AgentRow } from '../../projections/principal-queries.js';
import { lastStartOf, runningRunOf, runsStartedSince, tokensSince } from '../../projections/run-queries.js';
import { budgetLines, heldReservation, pauseForBudget } from '../budget.js';
import { runtimeSettings } from './settings.js';
import { openBreaker } from '../../projections/breaker-queries.js';
import { type CommandOptions } from '../../engine/handle.js';

/**
 * The facts the run decider's gates decide on (commands/run-gates.ts), read inside the command's
 * transaction, and the goal's pause when the decider refused a run at the budget gate for the goal's budget.
 */
export function agentFacts(app: App, agent: AgentRow): RunAgentFacts {
  return {
    agentId: agent.agentId,
    name: agent.name,
    hasBackend: agent.runnable,
    stopped: runtimeSettings(app.engine.db, agent.agentId).stopped,
    quarantined: agent.quarantined,
    quarantineReason: agent.quarantineReason,
  };
}

export function gateFacts(
  app: App,
  agent: AgentRow,
  goalId: number | null,
  task: TaskRow | null,
  now: string,
): GateFacts {
  const db = app.engine.db;
  const settings = runtimeSettings(db, agent.agentId);
  const goal = goalId === null ? null : getGoal(db, goalId);
  return {
    agent: agentFacts(app, agent),
    task: task && { taskId: task.taskId, status: task.status, reserved: heldReservation(task) },
    goal: goal && {
      goalId: goal.goalId,
      status: goal.status,
      pausedReason: goal.pausedReason,
      budget: budgetLines(app, goal, task),
    },
    breaker: breakerFacts(db, agent.agentId, goalId),
    maxTriggerDepth: settings.maxTriggerDepth,
    dailyRunBudget: settings.dailyRunBudget,
    ranToday: runsStartedSince(db, agent.agentId, midnight(now)),
    dailyTokenBudget: settings.dailyTokenBudget,
    tokensToday: tokensSince(db, agent.agentId, midnight(now)),
  };
}

/** The open breaker of (agent, goal): the `breaker` gate's one indexed read. */
function breakerFacts(db: App['engine']['db'], agentId: number, goalId: number | null): GateFacts['breaker'] {
  const open = openBreaker(db, agentId, goalId);
  return open && { ...open, goalId };
}

/** The start of `now`'s day, UTC: daily budgets count from it. */
export const midnight = (now: string): string => `${now.slice(0, 10)}T00:00:00.000Z`;

export function waitFacts(app: App, agentId: number): WaitFacts {
  const db = app.engine.db;
  return {
    running: runningRunOf(db, agentId) !== null,
    lastStart: lastStartOf(db, agentId),
    cooldownSec: runtimeSettings(db, agentId).cooldownSec,
  };
}

/** A run refused at the budget gate for its goal's budget pauses the goal (the goal decider ignores one that is not active). */
export function pauseIfRefusedForBudget(
  app: App,
  events: readonly StoredEvent[],
  facts: GateFacts,
  actor: CommandOptions,
): void {
  const refused = events.find(
    (e): e is StoredEvent<Extract<RunEvent, { type: 'RunRefused' }>> => e.type === 'RunRefused',
  );
  if (refused?.data.gate !== 'budget' || !facts.goal) return;
  const refusal = budgetOf(facts);
  if (refusal?.scope === 'goal')
    pauseForBudget(app, getGoal(app.engine.db, facts.goal.goalId)!, refusal, { key: 'system', name: 'system' }, actor);
}
