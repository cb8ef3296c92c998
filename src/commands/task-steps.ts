import { DomainError } from '../errors.js';
import type { Notice } from '../events/notices.js';
import type { Amount, TaskEvent, TaskStatus, VerifierKind } from '../events/tasks.js';
import type { DecideContext } from '../engine/decider.js';
import { type AgentRef } from '../events/principals.js';
import { type ClaimTask, type DispatchTask, type Live, type VerifyTask } from './task-types.js';

/**
 * The task decider's steps (commands/tasks.ts decides which runs): a claim as a lease (DESIGN §3.6), a
 * dispatch (§3.5), a verdict by the configured verifier (§3.13), a lease's expiry, the assignee check,
 * and the channel notice every transition carries. Pure, like the decider.
 */
export const holding = (s: Live): boolean => s.status === 'claimed' || s.status === 'in_progress';
export const expired = (s: Live, now: string): boolean =>
  holding(s) && s.leaseExpiresAt !== null && Date.parse(s.leaseExpiresAt) <= Date.parse(now);

export function claim(state: Live, c: ClaimTask, ctx: DecideContext): TaskEvent[] {
  const leaseExpiresAt = new Date(Date.parse(ctx.now) + c.leaseMs).toISOString();
  const base = {
    taskId: state.taskId,
    agentId: c.agent.agentId,
    agentName: c.agent.name,
    leaseExpiresAt,
    reservation: c.reservation,
  };
  const hashed = (hash: string | undefined) => (hash ? { configHash: hash } : {});
  const live = holding(state) && !expired(state, ctx.now);
  if (live && state.assignee?.agentId === c.agent.agentId) {
    // A renewal keeps the config the work started under.
    return [
      {
        type: 'TaskClaimed',
        data: { ...base, ...hashed(state.assignee.configHash), renewed: true, from: state.status, notice: null },
      },
    ];
  }
  if (live)
    throw new DomainError('ErrAlreadyClaimed', `task already claimed by another agent (${state.assignee?.name})`, {
      task_id: state.taskId,
      assignee: state.assignee?.name,
    });
  if (c.goalStatus !== null && (c.goalStatus === 'completed' || c.goalStatus === 'cancelled')) {
    throw new DomainError(
      'ErrGoalClosed',
      `the goal of task ${state.taskId} is ${c.goalStatus}: its tasks take no new claims`,
      { goal_id: state.goalId },
    );
  }
  if (c.goalStatus === 'paused')
    throw new DomainError(
      'ErrGoalBudgetExceeded',
      'the goal is paused: no new work starts until the owner resumes it',
      { goal_id: state.goalId },
    );
  const events: TaskEvent[] = [];
  let current: Live = state;
  if (holding(state)) {
    events.push(expiry(state, ctx));
    current = { ...state, status: 'approved', assignee: null, leaseExpiresAt: null };
  }
  if (current.status !== 'approved') {
    throw new DomainError('ErrTaskNotApproved', `task ${state.taskId} is ${current.status}, not approved`, {
      task_id: state.taskId,
      status: current.status,
    });
  }
  events.push({
    type: 'TaskClaimed',
    data: {
      ...base,
      ...hashed(c.agent.configHash),
      renewed: false,
      from: 'approved',
      notice: transition(current, ctx, 'claimed', c.agent.name, { lease_expires_at: leaseExpiresAt }),
    },
  });
  return events;
}

/** proposed, failed or timeout → approved; already approved is a no-op (nothing written); anything else is refused. */
export function dispatch(state: Live, c: DispatchTask, ctx: DecideContext): TaskEvent[] {
  if (state.status === 'approved') return [];
  if (state.status !== 'proposed' && state.status !== 'failed' && state.status !== 'timeout')
    throw illegalTask(state.status, 'approved');
  const attempt = state.status === 'proposed' ? state.attempt : state.attempt + 1;
  return [
    {
      type: 'TaskDispatched',
      data: {
        taskId: state.taskId,
        from: state.status,
        attempt,
        by: c.by,
        notice: transition(state, ctx, 'approved', c.by.name, { event: 'TaskDispatched', attempt }),
      },
    },
  ];
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

const UNIT = { tokens: 'tokens', cents: '¢' } as const;

/** The task budget's one soft alert per dimension when its subtree has spent 80 % — the goal's rule (goals.ts applySpend), without the pause. */
export function budgetAlerts(state: Live, spent: Amount, ctx: DecideContext): TaskEvent[] {
  const events: TaskEvent[] = [];
  for (const dimension of ['tokens', 'cents'] as const) {
    const budget = state.budgets[dimension];
    const used = spent[dimension];
    if (budget === null || budget <= 0 || state.alerted[dimension] || used * 10 < budget * 8) continue;
    const percent = Math.floor((used / budget) * 100);
    const body = `⚠️ Budget soft alert: task #${state.taskId} "${state.title}" has used ${percent}% of its ${dimension} budget (${used} of ${budget} ${UNIT[dimension]})`;
    events.push({
      type: 'TaskBudgetAlertRaised',
      data: {
        taskId: state.taskId,
        goalId: state.goalId,
        dimension,
        spent: used,
        budget,
        percent,
        notice: note(state.taskId, state.goalId, state.channelId, ctx, body, {
          event: 'TaskBudgetAlertRaised',
          dimension,
          spent: used,
          budget,
          percent,
        }),
      },
    });
  }
  return events;
}

export function expiry(state: Live, ctx: DecideContext): TaskEvent {
  return {
    type: 'ClaimExpired',
    data: {
      taskId: state.taskId,
      agentId: state.assignee!.agentId,
      leaseExpiresAt: state.leaseExpiresAt!,
      from: state.status,
      notice: transition(state, ctx, 'approved', 'system', {
        event: 'ClaimExpired',
        reason: `lease of ${state.assignee!.name} expired`,
        previous_assignee: state.assignee!.name,
      }),
    },
  };
}

/** Only the assignee, while its lease lasts, moves a held task on. */
export function mustHold(state: Live, agent: AgentRef, now: string): void {
  if (!holding(state) || state.assignee?.agentId !== agent.agentId) {
    throw new DomainError(
      'ErrNotAssignee',
      `task ${state.taskId} is ${state.status}${state.assignee ? ` and assigned to ${state.assignee.name}` : ''}; only its assignee can do this while it is claimed`,
      { task_id: state.taskId, status: state.status },
    );
  }
  if (expired(state, now)) {
    throw new DomainError(
      'ErrLeaseExpired',
      `your claim on task ${state.taskId} expired at ${state.leaseExpiresAt}: claim it again`,
      { task_id: state.taskId, lease_expires_at: state.leaseExpiresAt },
    );
  }
}

export function transition(
  state: Live,
  ctx: DecideContext,
  to: TaskStatus,
  actor: string,
  extra: Record<string, unknown> = {},
): Notice {
  const reason = typeof extra.reason === 'string' ? ` — ${extra.reason}` : '';
  const body = `Task #${state.taskId} "${state.title}": ${state.status} → ${to} by ${actor}${reason}`;
  return note(state.taskId, state.goalId, state.channelId, ctx, body, {
    event: 'TaskTransition',
    from: state.status,
    to,
    actor,
    ...extra,
  });
}

export function note(
  taskId: number,
  goalId: number | null,
  channelId: number,
  ctx: DecideContext,
  body: string,
  metadata: Record<string, unknown>,
): Notice {
  return {
    messageId: ctx.ids.next('message'),
    channelId,
    body,
    metadata: { kind: 'system', goal_id: goalId, task_id: taskId, ...metadata },
  };
}

export const illegalTask = (from: string, to: string): DomainError =>
  new DomainError('ErrIllegalTransition', `illegal task status transition: ${from} → ${to}`, { from, to });
