import { DomainError } from '../errors.js';
import { MAX_REJECTIONS_CAP, type ClosingStatus, type EvidenceRule, type GoalEvent } from '../events/goals.js';
import type { By } from '../events/principals.js';
import type { DecideContext } from '../engine/decider.js';
import { isGoalOwner, notice, type Live } from './goal-state.js';

/**
 * "Done only with evidence", the goal's side: the owner's rule (whether a leaf is done only by a verdict from
 * someone other than its author, and how many rejected hand-ins go back to the assignee before one fails
 * the task), and the refusal to complete a goal that requires evidence while a leaf is not done by such a
 * verdict. The task's side (an auto verifier deciding no leaf, the rejection loop) is task-verdicts.ts's.
 */
export type SetEvidenceRule = { type: 'SetEvidenceRule'; requireEvidence?: boolean; maxRejections?: number; by: By };

/** A goal's leaf tasks that are neither done nor cancelled: how many, and the first few (id order). */
export interface UnverifiedLeaves {
  count: number;
  first: { taskId: number; status: string }[];
}

/** Only the owner sets the rule, on a goal still open; the same rule again writes nothing. */
export function setEvidenceRule(state: Live, c: SetEvidenceRule, ctx: DecideContext): GoalEvent[] {
  if (!isGoalOwner(state, c.by.key))
    throw new DomainError('ErrForbidden', `only the owner of goal ${state.goalId} sets its evidence rule`, {
      goal_id: state.goalId,
    });
  const limit = c.maxRejections;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0 || limit > MAX_REJECTIONS_CAP))
    throw new DomainError('ErrInvalidInput', `max_rejections must be an integer from 0 to ${MAX_REJECTIONS_CAP}`, {
      field: 'max_rejections',
    });
  const from: EvidenceRule = { requireEvidence: state.requireEvidence, maxRejections: state.maxRejections };
  const to: EvidenceRule = {
    requireEvidence: c.requireEvidence ?? from.requireEvidence,
    maxRejections: limit ?? from.maxRejections,
  };
  if (to.requireEvidence === from.requireEvidence && to.maxRejections === from.maxRejections) return [];
  if (state.status === 'completed' || state.status === 'cancelled')
    throw new DomainError('ErrGoalClosed', `goal ${state.goalId} is ${state.status}`, { goal_id: state.goalId });
  const rule = to.requireEvidence
    ? 'a leaf is done only by a verdict from a recipe, an independent peer or the owner'
    : 'auto verifiers may mark leaves done';
  const body = `Goal "${state.title}": ${rule}; a rejected hand-in goes back to its assignee up to ${to.maxRejections} time${to.maxRejections === 1 ? '' : 's'} — set by ${c.by.name}`;
  return [
    {
      type: 'GoalEvidenceRuleSet',
      data: {
        goalId: state.goalId,
        from,
        to,
        by: c.by.name,
        notice: notice(state, ctx, body, {
          event: 'GoalEvidenceRuleSet',
          require_evidence: to.requireEvidence,
          max_rejections: to.maxRejections,
          actor: c.by.name,
        }),
      },
    },
  ];
}

const LISTED = 10;

/** Closing as completed a goal that requires evidence: refused while any leaf is not done by a verdict that counts. */
export function mustBeVerified(state: Live, to: ClosingStatus, leaves: UnverifiedLeaves | undefined): void {
  if (to !== 'completed' || !state.requireEvidence) return;
  // Without the fact the rule would be skipped: a caller's bug, never a pass.
  if (leaves === undefined) throw new Error('completing a goal that requires evidence needs its unverified leaves');
  if (leaves.count === 0) return;
  const first = leaves.first.slice(0, LISTED);
  const listed = first.map((l) => `#${l.taskId} (${l.status})`).join(', ');
  const more = leaves.count > first.length ? ` and ${leaves.count - first.length} more` : '';
  throw new DomainError(
    'ErrUnverifiedLeaves',
    `goal ${state.goalId} requires evidence and ${leaves.count} of its leaf tasks ${leaves.count === 1 ? 'is' : 'are'} not done by a verdict from someone other than their author: ${listed}${more}. Have them verified (the owner: verify_task, colony tasks verify), cancel them, or close the goal as stuck`,
    { goal_id: state.goalId, count: leaves.count, tasks: first.map((l) => ({ task_id: l.taskId, status: l.status })) },
  );
}
