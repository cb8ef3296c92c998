import type { Router } from 'express';
import * as z from 'zod';
import { cancelTask, taskFor } from '../actions/tasks.js';
import { argsDigest } from '../mcp/audit.js';
import { principalKey } from '../mcp/auth.js';
import type { McpContext } from '../mcp/context.js';
import { actor, body, Id, ownerOf, parse, speakerOf } from './api-common.js';
import { visibleArtifacts } from './api-goal-outcome.js';
import { blockersOf } from '../projections/task-blocker-queries.js';
import { verdictsOf, waitsFor } from './task-verdicts-view.js';

/**
 * `POST /api/tasks/:id/cancel`: destructive, so — like cancel_task over MCP (mcp/call-checks.ts) — the first
 * call only answers with a one-use confirmation token (60 s), bound to this endpoint, to the caller
 * (kind, id and tenant) and to the digest of the validated arguments; the second call, with the same
 * arguments and the token, cancels. The token is consumed by its first use, even one that fails.
 */
export const CANCEL_TASK = 'POST /api/tasks/:id/cancel';
const CancelBody = z.strictObject({
  reason: z.string().trim().min(3).max(2000),
  confirmation_token: z.string().min(1).max(200).optional(),
});

export function mountTasks(router: Router, ctx: McpContext): void {
  // One task as the goal page opens it: what was asked, what was handed in, the verdict with the
  // verifier's output (secret values already masked when it was recorded) and the artifacts it named.
  router.get('/tasks/:id', (req, res) => {
    const { task: t, goal } = taskFor(ctx.app, speakerOf(req), parse(Id, req.params.id, 'id'));
    const artifacts = visibleArtifacts(ctx.app.engine.db, speakerOf(req), t.artifactMessageIds);
    res.json({
      id: t.taskId,
      goal_id: t.goalId,
      title: t.title,
      description: t.description,
      acceptance_criteria: t.acceptanceCriteria,
      status: t.status,
      assignee: t.assigneeName,
      attempt: t.attempt,
      summary: t.summary,
      verdict: t.verdict,
      verified_by: t.verifiedBy,
      verifier: t.verifier.kind,
      verifier_output: t.verifierOutput,
      failure_reason: t.failureReason,
      // Done only with evidence: whose verdict a hand-in waits for, this attempt's rejections and every verdict.
      waits_for: waitsFor(t),
      rejections: t.rejections,
      max_rejections: goal?.maxRejections ?? null,
      verdicts: verdictsOf(ctx.app.engine.db, t.taskId),
      blocked_by: blockersOf(ctx.app.engine.db, t).map((b) => ({
        id: b.taskId,
        title: b.title,
        status: b.status,
        done: b.status === 'done',
      })),
      artifacts,
      claimed_at: t.claimedAt,
      submitted_at: t.submittedAt,
      completed_at: t.completedAt,
    });
  });
  router.post('/tasks/:id/cancel', (req, res) => {
    const caller = ownerOf(req, 'cancels tasks');
    const taskId = parse(Id, req.params.id, 'id');
    const { confirmation_token: token, ...rest } = body(CancelBody, req);
    const args = { task_id: taskId, ...rest };
    const digest = argsDigest(args);
    if (token === undefined) {
      taskFor(ctx.app, speakerOf(req), taskId); // another tenant's or no such task: 404 now, not after confirming
      const confirm = ctx.confirmations.issue(CANCEL_TASK, digest, principalKey(caller));
      return void res.json({
        confirmation_required: true,
        confirm_token: confirm,
        args_preview: args,
        message: `Cancelling task ${taskId} cannot be undone. Send the same request again with "confirmation_token": "${confirm}" within 60 s.`,
      });
    }
    ctx.confirmations.redeem(token, CANCEL_TASK, digest, principalKey(caller));
    const t = cancelTask(ctx.app, speakerOf(req), taskId, rest.reason, actor(req));
    res.json({ task_id: t.taskId, status: t.status });
  });
}
