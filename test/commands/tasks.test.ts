import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { taskDecider } from '../../src/commands/tasks.js';
import type { Notice } from '../../src/events/notices.js';
import { memoryIds } from '../../src/engine/ids.js';
import type {
  ClaimExpired,
  TaskClaimed,
  TaskCompleted,
  TaskCreated,
  TaskEvent,
  TaskStarted,
  TaskStatus,
  TaskVerified,
  VerifierConfig,
} from '../../src/events/tasks.js';
import { spec } from '../helpers/decider-spec.js';
import { type AgentRef } from '../../src/events/principals.js';
import { type TaskCommand } from '../../src/commands/task-types.js';

/**
 * The task decider, given/when/then (DESIGN §3.5, §3.6, §3.13; reference §4.2, §6.5, §6.9):
 * approved → claimed → in_progress → awaiting_verification → done | failed, release and lease expiry
 * back to approved, renewal by the assignee, cancellation from any non-terminal status, and the order
 * in which verify_task's refusals are checked.
 */
const T0 = '2026-01-01T00:00:00.000Z';
const LEASE = 30 * 60_000;
const at = (minutes: number): string => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const owner = { key: 'user-1', name: 'owner' };
const system = { key: 'system', name: 'system' };
const worker: AgentRef = { agentId: 3, name: 'worker' };
const helper: AgentRef = { agentId: 4, name: 'helper' };
const reviewer: AgentRef = { agentId: 5, name: 'reviewer' };
const TITLE = 'Scan docs';

const notice = (messageId: number, body: string, metadata: Record<string, unknown>): Notice => ({
  messageId,
  channelId: 3,
  body,
  metadata: { kind: 'system', goal_id: 1, task_id: 7, ...metadata },
});
const moved = (
  messageId: number,
  from: TaskStatus,
  to: TaskStatus,
  actor: string,
  extra: Record<string, unknown> = {},
): Notice => {
  const reason = typeof extra.reason === 'string' ? ` — ${extra.reason}` : '';
  return notice(messageId, `Task #7 "${TITLE}": ${from} → ${to} by ${actor}${reason}`, {
    event: 'TaskTransition',
    from,
    to,
    actor,
    ...extra,
  });
};

function created(verifier: VerifierConfig = { kind: 'auto' }): TaskCreated {
  return {
    type: 'TaskCreated',
    data: {
      taskId: 7,
      goalId: 1,
      parentId: null,
      depth: 0,
      ancestry: [],
      title: TITLE,
      description: 'Scan every page for dead links',
      acceptanceCriteria: 'no dead links',
      billingCode: 'docs',
      budgets: { tokens: null, cents: null },
      verifier,
      heartbeat: null,
      status: 'approved',
      proposalId: 2,
      channelId: 3,
      by: owner,
      notice: notice(1, `Task #7 "${TITLE}": (new) → approved by owner`, {
        event: 'TaskCreated',
        from: null,
        to: 'approved',
        actor: 'owner',
      }),
    },
  };
}
const create = (verifier?: VerifierConfig): TaskCommand => {
  const { notice: _n, ...task } = created(verifier).data;
  return { type: 'CreateTask', task };
};
const claimed = (agent: AgentRef, now = T0, from: TaskStatus = 'approved', messageId = 1): TaskClaimed => {
  const leaseExpiresAt = new Date(Date.parse(now) + LEASE).toISOString();
  return {
    type: 'TaskClaimed',
    data: {
      taskId: 7,
      agentId: agent.agentId,
      agentName: agent.name,
      leaseExpiresAt,
      renewed: false,
      reservation: { tokens: 0, cents: 0 },
      from,
      notice: moved(messageId, from, 'claimed', agent.name, { lease_expires_at: leaseExpiresAt }),
    },
  };
};
const renewed = (agent: AgentRef, now: string, from: TaskStatus): TaskClaimed => ({
  type: 'TaskClaimed',
  data: {
    taskId: 7,
    agentId: agent.agentId,
    agentName: agent.name,
    leaseExpiresAt: new Date(Date.parse(now) + LEASE).toISOString(),
    renewed: true,
    reservation: { tokens: 0, cents: 0 },
    from,
    notice: null,
  },
});
const started = (agent: AgentRef = worker): TaskStarted => ({
  type: 'TaskStarted',
  data: { taskId: 7, agentId: agent.agentId, from: 'claimed', notice: moved(1, 'claimed', 'in_progress', agent.name) },
});
const completed = (from: 'claimed' | 'in_progress' = 'in_progress', agent: AgentRef = worker): TaskCompleted => ({
  type: 'TaskCompleted',
  data: {
    taskId: 7,
    agentId: agent.agentId,
    summary: 'all links fixed',
    artifactMessageIds: [11],
    from,
    notice: moved(1, from, 'awaiting_verification', agent.name, { summary: 'all links fixed' }),
  },
});
const verified = (
  verdict: 'approve' | 'reject',
  kind: 'peer' | 'auto' | 'command',
  by: { key: string; name: string },
  reason: string,
  extra: Partial<TaskVerified['data']> = {},
  messageId = 1,
): TaskVerified => {
  const to = verdict === 'approve' ? 'done' : 'failed';
  return {
    type: 'TaskVerified',
    data: {
      taskId: 7,
      goalId: 1,
      verdict,
      verifierKind: kind,
      verifier: by,
      reason,
      domain: 'docs',
      assigneeAgentId: worker.agentId,
      exitCode: null,
      output: null,
      to,
      notice: moved(messageId, 'awaiting_verification', to, by.name, { verdict, verifier_kind: kind, reason }),
      ...extra,
    },
  };
};
const expiredEvent = (agent: AgentRef, from: TaskStatus, leaseExpiresAt: string, messageId = 1): ClaimExpired => ({
  type: 'ClaimExpired',
  data: {
    taskId: 7,
    agentId: agent.agentId,
    leaseExpiresAt,
    from,
    notice: moved(messageId, from, 'approved', 'system', {
      event: 'ClaimExpired',
      reason: `lease of ${agent.name} expired`,
      previous_assignee: agent.name,
    }),
  },
});

const claim = (agent: AgentRef, extra: Partial<Extract<TaskCommand, { type: 'ClaimTask' }>> = {}): TaskCommand => ({
  type: 'ClaimTask',
  agent: { ...agent, quarantined: false },
  leaseMs: LEASE,
  reservation: { tokens: 0, cents: 0 },
  goalStatus: 'active',
  ...extra,
});
const start = (agent: AgentRef = worker): TaskCommand => ({ type: 'StartTask', agent });
const complete = (agent: AgentRef = worker): TaskCommand => ({
  type: 'CompleteTask',
  agent,
  summary: 'all links fixed',
  artifactMessageIds: [11],
});
const release = (agent: AgentRef = worker): TaskCommand => ({
  type: 'ReleaseTask',
  agent,
  reason: 'blocked on access',
});
const cancel: TaskCommand = { type: 'CancelTask', reason: 'no longer needed', by: owner };
const peerVerify = (
  agent: AgentRef,
  verdict: 'approve' | 'reject' = 'approve',
  reason = 'looks good',
): TaskCommand => ({
  type: 'VerifyTask',
  verdict,
  reason,
  verifier: { key: `agent-${agent.agentId}`, name: agent.name },
  as: { kind: 'peer', agentId: agent.agentId },
});
const commandVerify = (exitCode: number, output: string): TaskCommand => ({
  type: 'VerifyTask',
  verdict: exitCode === 0 ? 'approve' : 'reject',
  reason: `verifier command exited ${exitCode}`,
  verifier: system,
  as: { kind: 'command', exitCode, output },
});

const peer: VerifierConfig = { kind: 'peer', agent_id: reviewer.agentId };
const command: VerifierConfig = { kind: 'command', cmd: 'make verify', timeout_sec: 60 };
const awaiting = (verifier: VerifierConfig = peer): TaskEvent[] => [
  created(verifier),
  claimed(worker),
  started(),
  completed(),
];

/** Folds events the way loadState does, to look at the state a sequence leads to. */
const stateAfter = (events: readonly TaskEvent[]) =>
  events.reduce((s, e) => taskDecider.evolve(s, e), taskDecider.initialState());

describe('task decider: creation', () => {
  it('creates an approved task with its notice, once', () => {
    spec(taskDecider).given([]).when(create()).then([created()]);
    spec(taskDecider).given([created()]).when(create()).thenThrows('ErrTaskExists');
  });

  it('refuses every other command on a task that does not exist', () => {
    for (const c of [
      claim(worker),
      start(),
      complete(),
      release(),
      cancel,
      peerVerify(reviewer),
      { type: 'ExpireClaim' } as TaskCommand,
      { type: 'RecordCost', by: owner, tokens: 1, cents: 1, note: null, source: 'report_usage' } as TaskCommand,
    ]) {
      spec(taskDecider).given([]).when(c).thenThrows('ErrTaskNotFound');
    }
  });
});

describe('task decider: the happy path', () => {
  it('claims an approved task with a 30-minute lease and a notice', () => {
    spec(taskDecider)
      .given([created()])
      .when(claim(worker))
      .then([claimed(worker)]);
    const s = stateAfter([created(), claimed(worker)]);
    assert.ok(s.status !== 'absent');
    assert.deepEqual([s.status, s.assignee, s.leaseExpiresAt], ['claimed', worker, at(30)]);
  });

  it('carries the claim reservation into the event', () => {
    const reservation = { tokens: 0, cents: 40 };
    const expected = claimed(worker);
    spec(taskDecider)
      .given([created()])
      .when(claim(worker, { reservation }))
      .then([{ ...expected, data: { ...expected.data, reservation } }]);
  });

  it('starts a claimed task (assignee only); starting again changes nothing', () => {
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(start())
      .then([started()]);
    spec(taskDecider)
      .given([created(), claimed(worker), started()])
      .when(start())
      .thenNothingHappened();
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(start(helper))
      .thenThrows('ErrNotAssignee');
    spec(taskDecider).given([created()]).when(start()).thenThrows('ErrNotAssignee');
  });

  it('completes from in_progress or straight from claimed into awaiting_verification', () => {
    spec(taskDecider)
      .given([created(peer), claimed(worker), started()])
      .when(complete())
      .then([completed('in_progress')]);
    spec(taskDecider)
      .given([created(peer), claimed(worker)])
      .when(complete())
      .then([completed('claimed')]);
    assert.equal(stateAfter(awaiting()).status, 'awaiting_verification');
  });

  it('an auto verifier decides in the same command: awaiting_verification → done', () => {
    spec(taskDecider)
      .given([created(), claimed(worker), started()])
      .when(complete())
      .then([completed(), verified('approve', 'auto', system, 'auto-approved: no verifier configured', {}, 2)]);
    const events = taskDecider.decide(complete(), stateAfter([created(), claimed(worker), started()]), {
      now: at(5),
      actor: 't',
      ids: memoryIds(),
    });
    assert.equal(stateAfter([created(), claimed(worker), started(), ...events]).status, 'done');
  });

  it('walks approved → claimed → in_progress → awaiting_verification → done with a peer verdict', () => {
    const history: TaskEvent[] = [created(peer)];
    const statuses: TaskStatus[] = [];
    const steps: TaskCommand[] = [claim(worker), start(), complete(), peerVerify(reviewer)];
    for (const step of steps) {
      history.push(...taskDecider.decide(step, stateAfter(history), { now: at(1), actor: 't', ids: memoryIds() }));
      statuses.push(stateAfter(history).status as TaskStatus);
    }
    assert.deepEqual(statuses, ['claimed', 'in_progress', 'awaiting_verification', 'done']);
  });

  it('a peer rejection fails the task', () => {
    spec(taskDecider)
      .given(awaiting())
      .when(peerVerify(reviewer, 'reject', 'links still broken'))
      .then([verified('reject', 'peer', { key: 'agent-5', name: 'reviewer' }, 'links still broken')]);
    assert.equal(
      stateAfter([...awaiting(), verified('reject', 'peer', { key: 'agent-5', name: 'reviewer' }, 'x')]).status,
      'failed',
    );
  });

  it('a command verdict records the exit code and the output', () => {
    spec(taskDecider)
      .given(awaiting(command))
      .when(commandVerify(3, 'FAIL: 2 dead links\n'))
      .then([
        verified('reject', 'command', system, 'verifier command exited 3', {
          exitCode: 3,
          output: 'FAIL: 2 dead links\n',
        }),
      ]);
    spec(taskDecider)
      .given(awaiting(command))
      .when(commandVerify(0, 'ok\n'))
      .then([verified('approve', 'command', system, 'verifier command exited 0', { exitCode: 0, output: 'ok\n' })]);
  });

  it('records cost on a task in any status, done included', () => {
    const cost: TaskCommand = {
      type: 'RecordCost',
      by: { key: 'agent-3', name: 'worker' },
      tokens: 100,
      cents: 50,
      note: 'run 1',
      source: 'report_usage',
    };
    const expected: TaskEvent = {
      type: 'CostRecorded',
      data: {
        taskId: 7,
        goalId: 1,
        by: { key: 'agent-3', name: 'worker' },
        tokens: 100,
        cents: 50,
        note: 'run 1',
        source: 'report_usage',
      },
    };
    spec(taskDecider).given([created()]).when(cost).then([expected]);
    spec(taskDecider)
      .given([...awaiting(), verified('approve', 'peer', { key: 'agent-5', name: 'reviewer' }, 'ok')])
      .when(cost)
      .then([expected]);
  });
});

describe('task decider: terminal statuses and cancellation', () => {
  const done = [...awaiting(), verified('approve', 'peer', { key: 'agent-5', name: 'reviewer' }, 'ok')];
  const failed = [...awaiting(), verified('reject', 'peer', { key: 'agent-5', name: 'reviewer' }, 'no')];
  const cancelledEvent = (from: TaskStatus): TaskEvent => ({
    type: 'TaskCancelled',
    data: {
      taskId: 7,
      reason: 'no longer needed',
      from,
      by: owner,
      notice: moved(1, from, 'cancelled', 'owner', { reason: 'no longer needed' }),
    },
  });

  it('cancels from every non-terminal status', () => {
    const histories: [TaskStatus, TaskEvent[]][] = [
      ['approved', [created()]],
      ['claimed', [created(), claimed(worker)]],
      ['in_progress', [created(), claimed(worker), started()]],
      ['awaiting_verification', awaiting()],
    ];
    for (const [from, history] of histories) {
      spec(taskDecider)
        .given(history)
        .when(cancel)
        .then([cancelledEvent(from)]);
      assert.equal(stateAfter([...history, cancelledEvent(from)]).status, 'cancelled');
    }
  });

  it('refuses done → cancelled and cancelled → cancelled with ErrIllegalTransition; failed (retryable, DESIGN §3.5) may be cancelled', () => {
    const e = spec(taskDecider).given(done).when(cancel).thenThrows('ErrIllegalTransition', 'done → cancelled');
    assert.deepEqual(e.details, { from: 'done', to: 'cancelled' });
    spec(taskDecider)
      .given([created(), cancelledEvent('approved')])
      .when(cancel)
      .thenThrows('ErrIllegalTransition', 'cancelled → cancelled');
    const state = failed.reduce((s, e) => taskDecider.evolve(s, e), taskDecider.initialState());
    const [dropped] = taskDecider.decide(cancel, state, { now: at(0), actor: 'tester', ids: { next: () => 99 } });
    assert.equal(dropped?.type, 'TaskCancelled');
  });

  it('nothing moves a terminal task on: no claim, start, completion, release or verdict', () => {
    for (const history of [done, failed, [created(peer), cancelledEvent('approved')]]) {
      spec(taskDecider).given(history).when(claim(helper)).thenThrows('ErrTaskNotApproved');
      spec(taskDecider).given(history).when(start()).thenThrows('ErrNotAssignee');
      spec(taskDecider).given(history).when(complete()).thenThrows('ErrNotAssignee');
      spec(taskDecider).given(history).when(release()).thenThrows('ErrNotAssignee');
      spec(taskDecider).given(history).when(peerVerify(reviewer)).thenThrows('ErrTaskNotAwaitingVerification');
      spec(taskDecider)
        .given(history)
        .when({ type: 'ExpireClaim' }, { now: at(120) })
        .thenNothingHappened();
    }
  });

  it('an awaiting_verification task cannot be claimed, completed again or released', () => {
    spec(taskDecider).given(awaiting()).when(claim(helper)).thenThrows('ErrTaskNotApproved', 'awaiting_verification');
    spec(taskDecider).given(awaiting()).when(complete()).thenThrows('ErrNotAssignee');
    spec(taskDecider).given(awaiting()).when(release()).thenThrows('ErrNotAssignee');
  });
});

describe('task decider: claims are leases', () => {
  it('a second agent is refused while the lease lasts', () => {
    const e = spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(claim(helper), { now: at(29) })
      .thenThrows('ErrAlreadyClaimed', 'worker');
    assert.equal(e.details?.assignee, 'worker');
    spec(taskDecider)
      .given([created(), claimed(worker), started()])
      .when(claim(helper), { now: at(10) })
      .thenThrows('ErrAlreadyClaimed');
  });

  it('the assignee renews its lease: no status change, no notice', () => {
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(claim(worker), { now: at(20) })
      .then([renewed(worker, at(20), 'claimed')]);
    spec(taskDecider)
      .given([created(), claimed(worker), started()])
      .when(claim(worker), { now: at(20) })
      .then([renewed(worker, at(20), 'in_progress')]);
    const s = stateAfter([created(), claimed(worker), started(), renewed(worker, at(20), 'in_progress')]);
    assert.ok(s.status !== 'absent');
    assert.deepEqual([s.status, s.leaseExpiresAt, s.assignee], ['in_progress', at(50), worker]);
    // The renewed lease is what counts: at minute 45 the worker can still complete.
    spec(taskDecider)
      .given([created(peer), claimed(worker), started(), renewed(worker, at(20), 'in_progress')])
      .when(complete(), { now: at(45) })
      .then([completed('in_progress')]);
  });

  it('releases back to approved (assignee only); another agent may then claim', () => {
    const releasedEvent: TaskEvent = {
      type: 'TaskReleased',
      data: {
        taskId: 7,
        agentId: 3,
        reason: 'blocked on access',
        from: 'in_progress',
        notice: moved(1, 'in_progress', 'approved', 'worker', { reason: 'blocked on access', event: 'TaskReleased' }),
      },
    };
    spec(taskDecider)
      .given([created(), claimed(worker), started()])
      .when(release())
      .then([releasedEvent]);
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(release(helper))
      .thenThrows('ErrNotAssignee');
    spec(taskDecider).given([created()]).when(release()).thenThrows('ErrNotAssignee');
    const after = [created(), claimed(worker), started(), releasedEvent];
    const s = stateAfter(after);
    assert.ok(s.status !== 'absent');
    assert.deepEqual([s.status, s.assignee, s.leaseExpiresAt], ['approved', null, null]);
    spec(taskDecider)
      .given(after)
      .when(claim(helper), { now: at(5) })
      .then([claimed(helper, at(5))]);
  });

  it('ExpireClaim does nothing before the lease runs out, and expires it from then on', () => {
    const held = [created(), claimed(worker), started()];
    spec(taskDecider)
      .given(held)
      .when({ type: 'ExpireClaim' }, { now: at(29) })
      .thenNothingHappened();
    spec(taskDecider)
      .given(held)
      .when({ type: 'ExpireClaim' }, { now: new Date(Date.parse(at(30)) - 1).toISOString() })
      .thenNothingHappened();
    spec(taskDecider)
      .given(held)
      .when({ type: 'ExpireClaim' }, { now: at(30) })
      .then([expiredEvent(worker, 'in_progress', at(30))]);
    spec(taskDecider)
      .given(held)
      .when({ type: 'ExpireClaim' }, { now: at(31) })
      .then([expiredEvent(worker, 'in_progress', at(30))]);
    spec(taskDecider)
      .given([created()])
      .when({ type: 'ExpireClaim' }, { now: at(31) })
      .thenNothingHappened();
    const s = stateAfter([...held, expiredEvent(worker, 'in_progress', at(30))]);
    assert.ok(s.status !== 'absent');
    assert.deepEqual([s.status, s.assignee, s.leaseExpiresAt], ['approved', null, null]);
    spec(taskDecider)
      .given([...held, expiredEvent(worker, 'in_progress', at(30))])
      .when({ type: 'ExpireClaim' }, { now: at(90) })
      .thenNothingHappened();
  });

  it('a claim on an expired lease emits ClaimExpired, then TaskClaimed', () => {
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(claim(helper), { now: at(31) })
      .then([expiredEvent(worker, 'claimed', at(30), 1), claimed(helper, at(31), 'approved', 2)]);
    // The old assignee re-claiming after expiry is a fresh claim too, not a renewal.
    spec(taskDecider)
      .given([created(), claimed(worker), started()])
      .when(claim(worker), { now: at(40) })
      .then([expiredEvent(worker, 'in_progress', at(30), 1), claimed(worker, at(40), 'approved', 2)]);
  });

  it('an expired lease does not let a claim through a paused goal', () => {
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(claim(helper, { goalStatus: 'paused' }), { now: at(31) })
      .thenThrows('ErrGoalBudgetExceeded');
  });

  it('the old assignee cannot move the task on after its lease ran out', () => {
    spec(taskDecider)
      .given([created(peer), claimed(worker), started()])
      .when(complete(), { now: at(31) })
      .thenThrows('ErrLeaseExpired', 'claim it again');
    spec(taskDecider)
      .given([created(peer), claimed(worker)])
      .when(start(), { now: at(30) })
      .thenThrows('ErrLeaseExpired');
    spec(taskDecider)
      .given([created(peer), claimed(worker)])
      .when(release(), { now: at(45) })
      .thenThrows('ErrLeaseExpired');
    // …and once another agent holds it, the old assignee is simply not the assignee.
    const taken = [
      created(peer),
      claimed(worker),
      started(),
      expiredEvent(worker, 'in_progress', at(30)),
      claimed(helper, at(31)),
    ];
    spec(taskDecider)
      .given(taken)
      .when(complete(worker), { now: at(32) })
      .thenThrows('ErrNotAssignee');
    spec(taskDecider)
      .given(taken)
      .when(complete(helper), { now: at(32) })
      .then([completed('claimed', helper)]);
  });
});

describe('task decider: claim gates', () => {
  it('a quarantined agent may not claim, whatever the task', () => {
    const q = claim(worker, { agent: { ...worker, quarantined: true } });
    spec(taskDecider).given([created()]).when(q).thenThrows('ErrAgentQuarantined', 'quarantined');
    spec(taskDecider).given([]).when(q).thenThrows('ErrAgentQuarantined');
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(q, { now: at(5) })
      .thenThrows('ErrAgentQuarantined');
  });

  it('a paused goal refuses new claims with ErrGoalBudgetExceeded; a closed one with ErrGoalClosed', () => {
    spec(taskDecider)
      .given([created()])
      .when(claim(worker, { goalStatus: 'paused' }))
      .thenThrows('ErrGoalBudgetExceeded', 'paused');
    spec(taskDecider)
      .given([created()])
      .when(claim(worker, { goalStatus: 'completed' }))
      .thenThrows('ErrGoalClosed');
    spec(taskDecider)
      .given([created()])
      .when(claim(worker, { goalStatus: 'cancelled' }))
      .thenThrows('ErrGoalClosed');
  });
});

describe('task decider: verify_task refusals, in order', () => {
  it('ErrVerifierNotConfigured first: a peer verdict on a task without a peer verifier, at any status', () => {
    for (const history of [[created()], awaiting({ kind: 'auto' }), awaiting(command)]) {
      spec(taskDecider).given(history).when(peerVerify(reviewer)).thenThrows('ErrVerifierNotConfigured');
    }
    spec(taskDecider)
      .given(awaiting(peer))
      .when(commandVerify(0, ''))
      .thenThrows('ErrVerifierNotConfigured', 'verified by peer, not command');
  });

  it('then ErrNotPermittedVerifier: only the configured peer, even before the task awaits verification', () => {
    spec(taskDecider)
      .given(awaiting(peer))
      .when(peerVerify(helper))
      .thenThrows('ErrNotPermittedVerifier', 'only agent 5');
    spec(taskDecider)
      .given([created(peer), claimed(worker)])
      .when(peerVerify(worker))
      .thenThrows('ErrNotPermittedVerifier');
  });

  it('then ErrTaskNotAwaitingVerification for the right verifier at the wrong time', () => {
    spec(taskDecider)
      .given([created(peer)])
      .when(peerVerify(reviewer))
      .thenThrows('ErrTaskNotAwaitingVerification', 'approved');
    spec(taskDecider)
      .given([created(peer), claimed(worker), started()])
      .when(peerVerify(reviewer))
      .thenThrows('ErrTaskNotAwaitingVerification', 'in_progress');
    spec(taskDecider)
      .given([...awaiting(peer), verified('approve', 'peer', { key: 'agent-5', name: 'reviewer' }, 'ok')])
      .when(peerVerify(reviewer, 'reject'))
      .thenThrows('ErrTaskNotAwaitingVerification', 'done');
    spec(taskDecider)
      .given([created(command)])
      .when(commandVerify(0, ''))
      .thenThrows('ErrTaskNotAwaitingVerification');
  });
});
