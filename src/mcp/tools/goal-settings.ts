import * as z from 'zod';
import { setEvidenceRule } from '../../actions/goal-evidence.js';
import { setApprovalMode } from '../../actions/goals.js';
import { MAX_REJECTIONS_CAP } from '../../events/goals.js';
import { speaker } from '../../events/principals.js';
import { DomainError } from '../../errors.js';
import { defineTool, type AnyTool } from '../tool.js';

/**
 * The owner's settings of a goal: how its proposals are approved (set_goal_approval_mode) and its evidence
 * rule — done only with evidence, and the retry limit of rejected hand-ins (set_goal_evidence).
 */
const mode = defineTool({
  name: 'set_goal_approval_mode',
  title: "Set a goal's approval mode",
  description:
    'Owner only. "auto" approves the goal\'s proposals at once (recorded as approved by system) — task trees whose command verifiers name your registered recipes, and spawns within the caps; "human" makes them wait for your approve/reject reaction in #approvals. A proposal already pending keeps waiting. Errors: ErrGoalNotFound, ErrGoalClosed.',
  trust: 'write',
  surface: 'owner',
  module: 'goals',
  input: z.strictObject({ goal_id: z.number().int().positive(), approval_mode: z.enum(['human', 'auto']) }),
  output: z.object({ goal_id: z.number().int(), approval_mode: z.string() }),
  handler(ctx, a) {
    const g = setApprovalMode(ctx.app, speaker(ctx.caller), a.goal_id, a.approval_mode, ctx.command);
    return { goal_id: g.goalId, approval_mode: g.approvalMode };
  },
});

const evidence = defineTool({
  name: 'set_goal_evidence',
  title: "Set a goal's evidence rule",
  description:
    "Owner only. require_evidence true: a leaf task is done only by a verdict from someone other than its author — a recipe, a peer outside its lineage, or you (a leaf with an auto verifier waits for your verdict: verify_task, `colony tasks verify`, the console) — and the goal completes only when every leaf is so done; false: auto verifiers mark leaves done at once. Turning it on reopens nothing already done. max_rejections (0–10): how many rejected hand-ins go back to the assignee with the verifier's feedback before the next one fails the task and comes to you. Give either or both. Errors: ErrGoalNotFound, ErrGoalClosed, ErrInvalidInput.",
  trust: 'write',
  surface: 'owner',
  module: 'goals',
  input: z.strictObject({
    goal_id: z.number().int().positive(),
    require_evidence: z.boolean().optional(),
    max_rejections: z.number().int().min(0).max(MAX_REJECTIONS_CAP).optional(),
  }),
  output: z.object({ goal_id: z.number().int(), require_evidence: z.boolean(), max_rejections: z.number().int() }),
  handler(ctx, a) {
    if (a.require_evidence === undefined && a.max_rejections === undefined)
      throw new DomainError('ErrInvalidInput', 'give require_evidence, max_rejections or both', {
        field: 'require_evidence',
      });
    const g = setEvidenceRule(
      ctx.app,
      speaker(ctx.caller),
      a.goal_id,
      { requireEvidence: a.require_evidence, maxRejections: a.max_rejections },
      ctx.command,
    );
    return { goal_id: g.goalId, require_evidence: g.requireEvidence, max_rejections: g.maxRejections ?? 0 };
  },
});

export const goalSettingTools: readonly AnyTool[] = [mode, evidence];
