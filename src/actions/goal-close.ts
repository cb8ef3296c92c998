import type { App } from '../app.js';
import { goalDecider } from '../commands/goals.js';
import { goalStream, type ClosingStatus } from '../events/goals.js';
import { type Speaker } from '../events/principals.js';
import { type CommandOptions } from '../engine/handle.js';
import { getGoal, type GoalRow } from '../projections/goal-queries.js';
import { unverifiedLeaves } from '../projections/evidence-queries.js';
import { goalFor, who } from './goals.js';
import { withdrawPendingProposals } from './proposals/decide.js';

/**
 * complete_goal: closes the goal as completed, stuck or cancelled (its owner or its coordinator), and in the
 * same transaction withdraws its pending proposals — a closed goal leaves nothing for the owner to approve.
 * (Its own module: closing reaches into proposals, which read goals.)
 */
export function closeGoal(
  app: App,
  by: Speaker,
  goalId: number,
  to: ClosingStatus,
  summary: string,
  actor: CommandOptions,
): GoalRow {
  app.engine.transact(actor, () => {
    const goal = goalFor(app, by, goalId);
    // Under "done only with evidence" a goal completes only when every leaf is done by a verdict that counts.
    const unverified = to === 'completed' ? unverifiedLeaves(app.engine.db, goalId) : undefined;
    app.engine.handle(
      goalDecider,
      goalStream(goalId),
      { type: 'CloseGoal', to, summary, by: who(by), unverified },
      actor,
    );
    withdrawPendingProposals(
      app,
      goal,
      `goal #${goalId} was closed as ${to} by ${by.name}: nothing is left to decide`,
      actor,
    );
  });
  return getGoal(app.engine.db, goalId)!;
}
