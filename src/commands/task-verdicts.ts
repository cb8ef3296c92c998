import { DomainError } from '../errors.js';
import type { TaskEvent, TaskVerified, VerdictKind } from '../events/tasks.js';
import type { DecideContext } from '../engine/decider.js';
import { isOwner, type AgentRef } from '../events/principals.js';
import { mustHold } from './task-claims.js';
import { transition } from './task-notices.js';
import type { CompleteTask, Live, VerifyTask } from './task-types.js';

/**
 * Completion and verdicts. The assignee hands its work in (awaiting_verification); the verifier the task
 * was approved with decides it — the configured peer agent, the command runner, or, for a task without
 * one, the automatic verifier in the same command. In a goal that requires evidence an automatic verifier
 * decides no leaf: the leaf waits for its owner's verdict. The owner of the task's tenant may judge any
 * hand-in. A verdict is refused, in this order: from a kind of verifier the task does not have, from a peer
 * other than the configured one (or an owner's verdict from anyone else), at a time the task does not
 * await verification. A rejection of a goal's task within the goal's retry limit sends it back to its
 * assignee, claimed under a fresh lease, the verdict being the feedback; past the limit it fails.
 */
export function complete(state: Live, c: CompleteTask, agent: AgentRef, ctx: DecideContext): TaskEvent[] {
  mustHold(state, agent, ctx.now);
  const from = state.status as 'claimed' | 'in_progress';
  const completed: TaskEvent = {
    type: 'TaskCompleted',
    data: {
      taskId: state.taskId,
      agentId: agent.agentId,
      summary: c.summary,
      artifactMessageIds: c.artifactMessageIds,
      from,
      notice: transition(state, ctx, 'awaiting_verification', agent.name, { summary: c.summary }),
    },
  };
  if (state.verifier.kind !== 'auto' || c.ownerVerifies) return [completed];
  const after = { ...state, status: 'awaiting_verification' as const };
  const auto: VerifyTask = {
    type: 'VerifyTask',
    verdict: 'approve',
    reason: 'auto-approved: no verifier configured',
    verifier: { key: 'system', name: 'system' },
    as: { kind: 'auto' },
    assigneeInVerifierLineage: false,
    retry: null,
  };
  return [completed, verdict(after, auto, ctx)];
}

export function verdict(state: Live, c: VerifyTask, ctx: DecideContext): TaskEvent {
  const kind: VerdictKind = c.as.kind;
  mayJudge(state, c);
  if (state.status !== 'awaiting_verification') {
    throw new DomainError(
      'ErrTaskNotAwaitingVerification',
      `task ${state.taskId} is ${state.status}, not awaiting_verification`,
      { task_id: state.taskId, status: state.status },
    );
  }
  const next = outcome(state, c, ctx);
  const exec = c.as.kind === 'command' ? c.as : null;
  const recipe = exec && state.verifier.kind === 'command' ? state.verifier.recipe : undefined;
  const recipeId = state.verifier.kind === 'command' ? (state.verifier.recipeId ?? null) : null;
  return {
    type: 'TaskVerified',
    data: {
      taskId: state.taskId,
      goalId: state.goalId,
      verdict: c.verdict,
      verifierKind: kind,
      verifier: c.verifier,
      reason: c.reason,
      ...(recipe === undefined ? {} : { recipe: { name: recipe, id: recipeId } }),
      domain: state.billingCode || 'default',
      assigneeAgentId: state.assignee?.agentId ?? null,
      ...(state.assignee?.configHash ? { assigneeConfigHash: state.assignee.configHash } : {}),
      exitCode: exec?.exitCode ?? null,
      output: exec?.output ?? null,
      ...(exec?.sandbox ? { sandbox: exec.sandbox, limit: exec.limit ?? null } : {}),
      ...next,
      notice: transition(state, ctx, next.to, c.verifier.name, {
        verdict: c.verdict,
        verifier_kind: kind,
        reason: c.reason,
        ...(next.rejections ? { rejections: next.rejections.count, max_rejections: next.rejections.limit } : {}),
        ...(next.returned ? { returned_to: state.assignee?.name } : {}),
      }),
    },
  };
}

function mayJudge(state: Live, c: VerifyTask): void {
  const as = c.as;
  if (as.kind === 'owner') {
    if (!isOwner(c.verifier, as.ownerId))
      throw new DomainError(
        'ErrNotPermittedVerifier',
        `only the owner gives an owner's verdict on task ${state.taskId}`,
        {
          task_id: state.taskId,
        },
      );
    return;
  }
  if (as.kind === 'peer') {
    if (state.verifier.kind !== 'peer')
      throw new DomainError(
        'ErrVerifierNotConfigured',
        `task ${state.taskId} has no peer verifier (its verifier is ${state.verifier.kind})`,
        { task_id: state.taskId },
      );
    if (state.verifier.agent_id !== as.agentId)
      throw new DomainError(
        'ErrNotPermittedVerifier',
        `only agent ${state.verifier.agent_id} may verify task ${state.taskId}`,
        { task_id: state.taskId },
      );
  } else if (state.verifier.kind !== as.kind) {
    throw new DomainError(
      'ErrVerifierNotConfigured',
      `task ${state.taskId} is verified by ${state.verifier.kind}, not ${as.kind}`,
      { task_id: state.taskId },
    );
  }
}

type Outcome = Pick<TaskVerified['data'], 'to' | 'rejections' | 'returned'>;

/** Where the verdict sends the task: done; back to its assignee while the goal's retry limit allows; else failed. */
function outcome(state: Live, c: VerifyTask, ctx: DecideContext): Outcome {
  if (c.verdict === 'approve') return { to: 'done' };
  if (c.retry === null) return { to: 'failed' };
  const rejections = { count: state.rejections + 1, limit: c.retry.limit };
  const assignee = state.assignee;
  if (state.rejections >= c.retry.limit || assignee === null) return { to: 'failed', rejections };
  const leaseExpiresAt = new Date(Date.parse(ctx.now) + c.retry.leaseMs).toISOString();
  return {
    to: 'claimed',
    rejections,
    returned: { agentId: assignee.agentId, leaseExpiresAt, reservation: c.retry.reservation },
  };
}
