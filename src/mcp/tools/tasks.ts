import * as z from 'zod';
import { agentIdOf } from '../../actions/goals.js';
import {
  cancelTask,
  claimTask,
  completeTask,
  releaseTask,
  reportUsage,
  taskFor,
  verifyTask,
} from '../../actions/tasks.js';
import { DomainError } from '../../errors.js';
import { lastCompletion } from '../tasks/verifications.js';
import { defineTool, type AnyTool } from '../tool.js';
import { isOwner, speaker } from '../../events/principals.js';

/**
 * The task lifecycle: an agent claims an approved task under a lease (claim_task), hands it in
 * (complete_task) or gives it back (release_task); a peer verifier records its verdict (verify_task);
 * agents that run outside Colony report what they spent (report_usage); the owner may cancel a task
 * (cancel_task, destructive).
 */
const TaskId = z.number().int().positive();
const Status = z.object({ task_id: z.number().int(), status: z.string() });

const claim = defineTool({
  name: 'claim_task',
  title: 'Claim a task',
  description:
    "Atomically claims an approved task for you with a 30-minute lease; claiming again while you hold it renews the lease. Complete it (complete_task) or give it back (release_task) before the lease runs out, or it returns to the pool. Errors: ErrAlreadyClaimed (another agent holds it), ErrTaskNotApproved, ErrAgentQuarantined, ErrGoalBudgetExceeded (the goal is paused or the claim's reservation would exceed its budget — that pauses it), ErrTaskBudgetExceeded, ErrTaskNotFound.",
  trust: 'write',
  surface: 'agent',
  module: 'tasks',
  input: z.strictObject({ task_id: TaskId }),
  output: z.object({
    task_id: z.number().int(),
    status: z.string(),
    claimed_at: z.string(),
    lease_expires_at: z.string(),
    renewed: z.boolean(),
  }),
  handler(ctx, a) {
    const c = claimTask(ctx.app, speaker(ctx.caller), a.task_id, ctx.command);
    return {
      task_id: c.taskId,
      status: c.status,
      claimed_at: c.claimedAt,
      lease_expires_at: c.leaseExpiresAt,
      renewed: c.renewed,
    };
  },
});

/**
 * complete_task's answer: the task's status — and, from an MCP task that waited for a command verifier
 * (src/mcp/tasks/verifications.ts), the verdict with the command's exit code and the end of its output.
 */
const Completed = Status.extend({
  verdict: z.enum(['approve', 'reject']).optional(),
  reason: z.string().optional(),
  exit_code: z.number().int().nullable().optional(),
  output: z.string().nullable().optional(),
});

const complete = defineTool({
  name: 'complete_task',
  title: 'Complete a task',
  description:
    'Hands in your claimed task with a summary and, optionally, the ids of messages holding its artifacts (post them to the goal channel first). The task moves to awaiting_verification; an auto verifier marks it done at once, a command verifier runs next, a peer verifier is asked. A client with the MCP tasks extension gets a task when a command verifier runs next: it completes with the verdict ({"task_id","status" (done or failed),"verdict","reason","exit_code","output"}). Errors: ErrNotAssignee, ErrLeaseExpired (claim it again), ErrNotFound (artifact message), ErrTaskNotFound.',
  trust: 'write',
  surface: 'agent',
  module: 'tasks',
  input: z.strictObject({
    task_id: TaskId,
    summary: z.string().trim().min(1).max(16_000),
    artifact_message_ids: z.array(z.number().int().positive()).max(100).default([]),
  }),
  output: Completed,
  handler(ctx, a) {
    const t = completeTask(ctx.app, speaker(ctx.caller), a.task_id, a.summary, a.artifact_message_ids, ctx.command);
    return { task_id: t.taskId, status: t.status };
  },
  // As an MCP task: the same hand-in; when a command verifier decides it next, the task follows that verdict in the log.
  task(ctx, a) {
    const t = completeTask(ctx.app, speaker(ctx.caller), a.task_id, a.summary, a.artifact_message_ids, ctx.command);
    const now = { now: { task_id: t.taskId, status: t.status } };
    if (t.status !== 'awaiting_verification' || t.verifier.kind !== 'command') return now;
    const version = lastCompletion(ctx.app, t.taskId);
    return version === null ? now : { task: { kind: 'verification' as const, taskId: t.taskId, version } };
  },
});

const release = defineTool({
  name: 'release_task',
  title: 'Release a task',
  description:
    'Gives your claimed task back to the pool (status approved, no assignee) with the reason, e.g. when you cannot do it. Errors: ErrNotAssignee, ErrLeaseExpired, ErrTaskNotFound.',
  trust: 'write',
  surface: 'agent',
  module: 'tasks',
  input: z.strictObject({ task_id: TaskId, reason: z.string().trim().min(3).max(2000) }),
  output: Status,
  handler(ctx, a) {
    const t = releaseTask(ctx.app, speaker(ctx.caller), a.task_id, a.reason, ctx.command);
    return { task_id: t.taskId, status: t.status };
  },
});

const verify = defineTool({
  name: 'verify_task',
  title: 'Verify a task',
  description:
    "Records your verdict on a task awaiting verification whose verifier_config names you as its peer — or, called with the owner's token, the owner's verdict on any task of the team awaiting verification (how a leaf of a goal that requires evidence, handed in with no other verifier, is decided). approve → done; reject (give the reason: it is the feedback) → back to its assignee, who is woken with your words, while the goal's max_rejections allows, else failed (the coordinator is told, and the owner once the retries are used up). Errors: ErrTaskNotAwaitingVerification, ErrVerifierNotConfigured (not a peer-verified task), ErrNotPermittedVerifier (you are not its verifier), ErrSelfVerification, ErrTaskNotFound.",
  trust: 'write',
  surface: 'agent',
  module: 'tasks',
  input: z.strictObject({
    task_id: TaskId,
    verdict: z.enum(['approve', 'reject']),
    reason: z.string().trim().max(4000).default(''),
  }),
  output: z.object({ task_id: z.number().int(), new_status: z.string() }),
  handler(ctx, a) {
    const by = speaker(ctx.caller);
    const agentId = agentIdOf(by);
    const owner = isOwner(by, by.tenant);
    if (agentId === null && !owner) {
      taskFor(ctx.app, by, a.task_id);
      throw new DomainError(
        'ErrNotPermittedVerifier',
        "only the task's configured peer agent or the owner verifies it",
        {
          task_id: a.task_id,
        },
      );
    }
    const who = owner ? 'owner' : 'peer';
    const reason =
      a.reason || (a.verdict === 'approve' ? `approved by ${who}` : `rejected by ${who} (no reason given)`);
    const as = agentId === null ? { kind: 'owner' as const, ownerId: by.tenant } : { kind: 'peer' as const, agentId };
    const t = verifyTask(ctx.app, by, a.task_id, a.verdict, reason, as, ctx.command);
    return { task_id: t.taskId, new_status: t.status };
  },
});

const usage = defineTool({
  name: 'report_usage',
  title: 'Report usage',
  description:
    "Records tokens and cost (US cents) you spent on a task, for agents that run outside Colony. Spend is always recorded; at 80 % of the goal's budget one soft alert is posted, at 100 % the goal is paused and the owner told. Errors: ErrTaskNotFound, ErrInvalidInput.",
  trust: 'write',
  surface: 'agent',
  module: 'tasks',
  input: z.strictObject({
    task_id: TaskId,
    tokens: z.number().int().min(0).max(1e12),
    cost_cents: z.number().int().min(0).max(1e10),
    note: z.string().max(2000).optional(),
  }),
  output: z.object({
    task_id: z.number().int(),
    goal_id: z.number().int().nullable(),
    goal_status: z.string().nullable(),
    spent_tokens: z.number().int(),
    spent_dollars_cents: z.number().int(),
  }),
  handler(ctx, a) {
    const { goal, task } = reportUsage(
      ctx.app,
      speaker(ctx.caller),
      a.task_id,
      a.tokens,
      a.cost_cents,
      a.note ?? null,
      ctx.command,
    );
    return {
      task_id: task.taskId,
      goal_id: goal?.goalId ?? null,
      goal_status: goal?.status ?? null,
      spent_tokens: task.spentTokens,
      spent_dollars_cents: task.spentCents,
    };
  },
});

const cancel = defineTool({
  name: 'cancel_task',
  title: 'Cancel a task',
  description:
    'Owner only, destructive. Cancels a task that is not done, failed, timed out or cancelled; its claim and reservation end. The first call returns a confirm_token; call again with the same arguments plus confirmation_token within 60 s. Errors: ErrTaskNotFound, ErrIllegalTransition.',
  trust: 'destructive',
  surface: 'owner',
  module: 'tasks',
  input: z.strictObject({ task_id: TaskId, reason: z.string().trim().min(3).max(2000) }),
  output: Status,
  handler(ctx, a) {
    const t = cancelTask(ctx.app, speaker(ctx.caller), a.task_id, a.reason, ctx.command);
    return { task_id: t.taskId, status: t.status };
  },
});

export const taskTools: readonly AnyTool[] = [claim, complete, release, verify, usage, cancel];
