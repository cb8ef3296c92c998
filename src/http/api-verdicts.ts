import type { Router } from 'express';
import * as z from 'zod';
import { setEvidenceRule } from '../actions/goal-evidence.js';
import { dispatchTask } from '../actions/projects/tasks.js';
import { verifyTask } from '../actions/tasks.js';
import { MAX_REJECTIONS_CAP } from '../events/goals.js';
import type { McpContext } from '../mcp/context.js';
import { actor, body, Id, ownerOf, parse, speakerOf } from './api-common.js';

/**
 * "Done only with evidence" in the console, the owner's alone: a verdict on a task awaiting verification
 * (verify_task with the owner's token — the Approve / Reject of the tree and of Needs you), a retry of a task
 * that failed at its goal's retry limit (task_dispatch: claimable again, a new attempt with its rejections
 * reset), and the goal's evidence rule (set_goal_evidence, the goal's Manage section).
 */
const VerdictBody = z
  .strictObject({ verdict: z.enum(['approve', 'reject']), reason: z.string().trim().max(4000).default('') })
  .refine((b) => b.verdict === 'approve' || b.reason.length >= 3, {
    message: 'a rejection needs a reason (at least 3 characters): the assignee reads it',
    path: ['reason'],
  });
const EvidenceBody = z
  .strictObject({
    require_evidence: z.boolean().optional(),
    max_rejections: z.number().int().min(0).max(MAX_REJECTIONS_CAP).optional(),
  })
  .refine((b) => b.require_evidence !== undefined || b.max_rejections !== undefined, {
    message: 'give require_evidence, max_rejections or both',
  });

export function mountVerdicts(router: Router, ctx: McpContext): void {
  router.post('/tasks/:id/verdict', (req, res) => {
    const owner = ownerOf(req, 'gives verdicts here');
    const id = parse(Id, req.params.id, 'id');
    const b = body(VerdictBody, req);
    const reason = b.reason || 'approved by owner';
    const as = { kind: 'owner' as const, ownerId: owner.userId };
    const t = verifyTask(ctx.app, speakerOf(req), id, b.verdict, reason, as, actor(req));
    res.json({ task_id: t.taskId, status: t.status, verdict: b.verdict, rejections: t.rejections });
  });
  router.post('/tasks/:id/retry', (req, res) => {
    ownerOf(req, 'retries tasks');
    const id = parse(Id, req.params.id, 'id');
    const { task } = dispatchTask(ctx.app, speakerOf(req), id, actor(req));
    res.json({ task_id: task.taskId, status: task.status, attempt: task.attempt });
  });
  router.post('/goals/:id/evidence', (req, res) => {
    ownerOf(req, 'sets the evidence rule');
    const id = parse(Id, req.params.id, 'id');
    const b = body(EvidenceBody, req);
    const rule = { requireEvidence: b.require_evidence, maxRejections: b.max_rejections };
    const g = setEvidenceRule(ctx.app, speakerOf(req), id, rule, actor(req));
    res.json({ goal_id: g.goalId, require_evidence: g.requireEvidence, max_rejections: g.maxRejections ?? 0 });
  });
}
