import { DomainError } from '../errors.js';
import type { TaskEvent, VerifierKind } from '../events/tasks.js';
import type { DecideContext } from '../engine/decider.js';
import type { AgentRef } from '../events/principals.js';
import { mustHold } from './task-claims.js';
import { transition } from './task-notices.js';
import type { CompleteTask, Live, VerifyTask } from './task-types.js';

/**
 * Completion and verdicts. The assignee hands its work in (awaiting_verification); the verifier the task
 * was approved with decides it — the configured peer agent, the command runner, or, for a task without
 * one, the automatic verifier in the same command. A verdict is refused, in this order: from a kind of
 * verifier the task does not have, from a peer other than the configured one, at a time the task does
 * not await verification.
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
  if (state.verifier.kind !== 'auto') return [completed];
  const after = { ...state, status: 'awaiting_verification' as const };
  const auto: VerifyTask = {
    type: 'VerifyTask',
    verdict: 'approve',
    reason: 'auto-approved: no verifier configured',
    verifier: { key: 'system', name: 'system' },
    as: { kind: 'auto' },
    assigneeInVerifierLineage: false,
  };
  return [completed, verdict(after, auto, ctx)];
}

export function verdict(state: Live, c: VerifyTask, ctx: DecideContext): TaskEvent {
  const kind: VerifierKind = c.as.kind;
  if (c.as.kind === 'peer') {
    if (state.verifier.kind !== 'peer')
      throw new DomainError(
        'ErrVerifierNotConfigured',
        `task ${state.taskId} has no peer verifier (its verifier is ${state.verifier.kind})`,
        { task_id: state.taskId },
      );
    if (state.verifier.agent_id !== c.as.agentId)
      throw new DomainError(
        'ErrNotPermittedVerifier',
        `only agent ${state.verifier.agent_id} may verify task ${state.taskId}`,
        { task_id: state.taskId },
      );
  } else if (state.verifier.kind !== kind) {
    throw new DomainError(
      'ErrVerifierNotConfigured',
      `task ${state.taskId} is verified by ${state.verifier.kind}, not ${kind}`,
      { task_id: state.taskId },
    );
  }
  if (state.status !== 'awaiting_verification') {
    throw new DomainError(
      'ErrTaskNotAwaitingVerification',
      `task ${state.taskId} is ${state.status}, not awaiting_verification`,
      { task_id: state.taskId, status: state.status },
    );
  }
  const to = c.verdict === 'approve' ? 'done' : 'failed';
  const exec = c.as.kind === 'command' ? c.as : null;
  return {
    type: 'TaskVerified',
    data: {
      taskId: state.taskId,
      goalId: state.goalId,
      verdict: c.verdict,
      verifierKind: kind,
      verifier: c.verifier,
      reason: c.reason,
      domain: state.billingCode || 'default',
      assigneeAgentId: state.assignee?.agentId ?? null,
      ...(state.assignee?.configHash ? { assigneeConfigHash: state.assignee.configHash } : {}),
      exitCode: exec?.exitCode ?? null,
      output: exec?.output ?? null,
      ...(exec?.sandbox ? { sandbox: exec.sandbox, limit: exec.limit ?? null } : {}),
      to,
      notice: transition(state, ctx, to, c.verifier.name, {
        verdict: c.verdict,
        verifier_kind: kind,
        reason: c.reason,
      }),
    },
  };
}
