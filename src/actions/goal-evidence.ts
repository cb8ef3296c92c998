import type { App } from '../app.js';
import { goalDecider } from '../commands/goals.js';
import { type CommandOptions } from '../engine/handle.js';
import { goalStream } from '../events/goals.js';
import { type Speaker } from '../events/principals.js';
import { getGoal, type GoalRow } from '../projections/goal-queries.js';
import { goalFor, who } from './goals.js';

/**
 * The owner's evidence rule of a goal (set_goal_evidence, `colony goals evidence`, the console's Manage
 * section): whether a leaf is done only by a verdict from someone other than its author, and how many
 * rejected hand-ins go back to the assignee. One transaction; the goal decider says who may.
 */
export function setEvidenceRule(
  app: App,
  by: Speaker,
  goalId: number,
  rule: { requireEvidence?: boolean; maxRejections?: number },
  actor: CommandOptions,
): GoalRow {
  app.engine.transact(actor, () => {
    goalFor(app, by, goalId);
    app.engine.handle(goalDecider, goalStream(goalId), { type: 'SetEvidenceRule', ...rule, by: who(by) }, actor);
  });
  return getGoal(app.engine.db, goalId)!;
}
