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
  TaskVerified,
  VerifierConfig,
} from '../../src/events/tasks.js';
import type { TaskStatus } from '../../src/events/task-status.js';
import { spec } from '../helpers/decider-spec.js';
import { type AgentRef } from '../../src/events/principals.js';
import { type TaskCommand } from '../../src/commands/task-types.js';
import { BudgetExceeded, budgetRefusal, type BudgetLine } from '../../src/commands/task-budget.js';

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
  inVerifierLineage: false,
  // A goal without budgets: no line to count against.
  budget: { lines: [], replaces: { tokens: 0, cents: 0 } },
  blockers: [],
  ...extra,
});
const start = (agent: AgentRef = worker): TaskCommand => ({ type: 'StartTask', agent });
const complete = (agent: AgentRef = worker): TaskCommand => ({
  type: 'CompleteTask',
  agent,
  summary: 'all links fixed',
  artifactMessageIds: [11],
  ownerVerifies: false,
});
const release = (agent: AgentRef = worker): TaskCommand => ({
  type: 'ReleaseTask',
  agent,
  reason: 'blocked on access',
});
const cancel: TaskCommand = { type: 'CancelTask', reason: 'no longer needed', by: owner, ownerId: 1 };
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
  assigneeInVerifierLineage: false,
  retry: null,
});
const commandVerify = (exitCode: number, output: string): TaskCommand => ({
  type: 'VerifyTask',
  verdict: exitCode === 0 ? 'approve' : 'reject',
  reason: `verifier command exited ${exitCode}`,
  verifier: system,
  as: { kind: 'command', exitCode, output },
  assigneeInVerifierLineage: false,
  retry: null,
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
      {
        type: 'RecordCost',
        by: owner,
        tokens: 1,
        cents: 1,
        note: null,
        source: 'report_usage',
        reporter: null,
      } as TaskCommand,
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
      reporter: { agentId: null, coordinatorAgentId: null },
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

describe('task decider: who may move a task', () => {
  it('only agents claim, start, complete and release — checked first, before the task is even looked at', () => {
    for (const [c, what] of [
      [claim(worker, { agent: null }), 'claim tasks'],
      [{ type: 'StartTask', agent: null }, 'start tasks'],
      [
        { type: 'CompleteTask', agent: null, summary: 's', artifactMessageIds: [], ownerVerifies: false },
        'complete tasks',
      ],
      [{ type: 'ReleaseTask', agent: null, reason: 'r' }, 'release tasks'],
    ] as [TaskCommand, string][]) {
      for (const history of [[created()], [created(), claimed(worker)], []]) {
        spec(taskDecider)
          .given(history)
          .when(c)
          .thenThrows('ErrForbidden', `only agents ${what}; owners act through their agents`);
      }
    }
  });

  it('only the owner of the task’s tenant cancels it', () => {
    for (const by of [{ key: 'agent-3', name: 'worker' }, { key: 'user-2', name: 'other' }, system]) {
      spec(taskDecider)
        .given([created()])
        .when({ ...cancel, by } as TaskCommand)
        .thenThrows('ErrForbidden', 'only the owner cancels tasks');
    }
    spec(taskDecider)
      .given([])
      .when({ ...cancel, by: { key: 'agent-3', name: 'worker' } } as TaskCommand)
      .thenThrows('ErrForbidden');
  });

  it('the peer verifier and its spawn lineage may not claim the work — before the quarantine is checked', () => {
    const e = spec(taskDecider)
      .given([created(peer)])
      .when(claim(helper, { inVerifierLineage: true, agent: { ...helper, quarantined: true } }))
      .thenThrows('ErrSelfVerification', 'so you may not claim it');
    assert.deepEqual(e.details, { task_id: 7, verifier_agent_id: reviewer.agentId });
    // Without a peer verifier there is no verdict to protect.
    spec(taskDecider)
      .given([created()])
      .when(claim(worker, { inVerifierLineage: true }))
      .then([claimed(worker)]);
  });

  it('a peer verdict on work its lineage did is refused first; the command runner is not a peer', () => {
    const e = spec(taskDecider)
      .given(awaiting(peer))
      .when({ ...peerVerify(helper), assigneeInVerifierLineage: true } as TaskCommand)
      .thenThrows('ErrSelfVerification', 'assignee is you or in your spawn lineage');
    assert.deepEqual(e.details, { task_id: 7, verifier_agent_id: reviewer.agentId });
    spec(taskDecider)
      .given(awaiting(command))
      .when({ ...commandVerify(0, 'ok\n'), assigneeInVerifierLineage: true } as TaskCommand)
      .then([verified('approve', 'command', system, 'verifier command exited 0', { exitCode: 0, output: 'ok\n' })]);
  });

  it('usage is reported by the assignee, the goal’s coordinator or the owner; a run’s own usage by Colony', () => {
    const report = (agentId: number | null, coordinatorAgentId: number | null = 9): TaskCommand => ({
      type: 'RecordCost',
      by: agentId === null ? owner : { key: `agent-${agentId}`, name: `a${agentId}` },
      tokens: 10,
      cents: 1,
      note: null,
      source: 'report_usage',
      reporter: { agentId, coordinatorAgentId },
    });
    const held = [created(), claimed(worker)];
    const e = spec(taskDecider)
      .given(held)
      .when(report(helper.agentId))
      .thenThrows('ErrForbidden', "only task 7's assignee, its goal's coordinator or the owner");
    assert.deepEqual(e.details, { task_id: 7 });
    spec(taskDecider).given(held).when(report(helper.agentId, null)).thenThrows('ErrForbidden');
    // Reported usage without its reporter would skip the rule: a caller's bug, never a pass.
    spec(taskDecider)
      .given(held)
      .when({ ...report(helper.agentId), reporter: null } as TaskCommand)
      .thenFailsAsBug(/reporter facts/);
    for (const ok of [report(worker.agentId), report(9), report(null)]) {
      const [event] = taskDecider.decide(ok, stateAfter(held), { now: at(1), actor: 't', ids: memoryIds() });
      assert.equal(event?.type, 'CostRecorded');
    }
  });

  it('a run that spent nothing records nothing; one that spent records its usage', () => {
    const run = (tokens: number, cents: number): TaskCommand => ({
      type: 'RecordCost',
      by: { key: 'agent-3', name: 'worker' },
      tokens,
      cents,
      note: 'run 4',
      source: 'run',
      runId: 4,
      reporter: null,
    });
    spec(taskDecider).given([created()]).when(run(0, 0)).thenNothingHappened();
    spec(taskDecider)
      .given([created()])
      .when(run(0, 2))
      .then([
        {
          type: 'CostRecorded',
          data: {
            taskId: 7,
            goalId: 1,
            by: { key: 'agent-3', name: 'worker' },
            tokens: 0,
            cents: 2,
            note: 'run 4',
            source: 'run',
            runId: 4,
          },
        },
      ]);
  });

  it('a run starting moves on only a claimed task its agent holds', () => {
    const byRun = (agent: AgentRef): TaskCommand => ({ type: 'StartTask', agent, byRun: true });
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(byRun(worker))
      .then([started()]);
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(byRun(helper))
      .thenNothingHappened();
    spec(taskDecider).given([created()]).when(byRun(worker)).thenNothingHappened();
    spec(taskDecider)
      .given([created(), claimed(worker), started()])
      .when(byRun(worker))
      .thenNothingHappened();
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(byRun(worker), { now: at(31) })
      .thenThrows('ErrLeaseExpired');
  });
});

describe('task decider: the budget gate of a claim', () => {
  const goalLine = (committed: number, budget: number | null = 100): BudgetLine => ({
    scope: 'goal',
    taskId: 7,
    budget: { tokens: null, cents: budget },
    committed: { tokens: 0, cents: committed },
  });
  const taskLine = (taskId: number, committed: number, budget: number): BudgetLine => ({
    scope: 'task',
    taskId,
    budget: { tokens: budget, cents: null },
    committed: { tokens: committed, cents: 0 },
  });
  const withBudget = (lines: BudgetLine[], cents = 20, replaces = { tokens: 0, cents: 0 }) =>
    claim(worker, { reservation: { tokens: 0, cents }, budget: { lines, replaces } });
  const claimedFor = (cents: number): TaskClaimed => {
    const c = claimed(worker);
    return { ...c, data: { ...c.data, reservation: { tokens: 0, cents } } };
  };

  it("a goal task's claim without its budget facts is a caller's bug, never a pass through the gate", () => {
    spec(taskDecider)
      .given([created()])
      .when(claim(worker, { budget: null }))
      .thenFailsAsBug(/budget facts/);
  });

  it('refuses a reservation that would take the goal past its budget: ErrGoalBudgetExceeded, with the refusal', () => {
    const e = spec(taskDecider)
      .given([created()])
      .when(withBudget([goalLine(90)]))
      .thenThrows(
        'ErrGoalBudgetExceeded',
        "the goal's cents budget would be exceeded: 90 committed \\+ 20 requested > 100",
      );
    assert.ok(e instanceof BudgetExceeded);
    assert.deepEqual(e.refusal, {
      scope: 'goal',
      taskId: 7,
      dimension: 'cents',
      committed: 90,
      requested: 20,
      budget: 100,
    });
    assert.match(e.message, /the goal is paused until the owner raises the budget/);
    spec(taskDecider)
      .given([created()])
      .when(withBudget([goalLine(80)]))
      .then([claimedFor(20)]);
  });

  it('a used-up budget refuses even a claim that reserves nothing; no budget or a zero one refuses nothing', () => {
    spec(taskDecider)
      .given([created()])
      .when(withBudget([goalLine(100)], 0))
      .thenThrows('ErrGoalBudgetExceeded');
    spec(taskDecider)
      .given([created()])
      .when(withBudget([goalLine(500, null), goalLine(500, 0)]))
      .then([claimedFor(20)]);
  });

  it('then each budgeted task up to the root: ErrTaskBudgetExceeded names the task', () => {
    const e = spec(taskDecider)
      .given([created()])
      .when(withBudget([goalLine(0), taskLine(7, 5, 50), taskLine(2, 50, 50)]))
      .thenThrows('ErrTaskBudgetExceeded', "task 2's tokens budget would be exceeded");
    assert.deepEqual(e.details, {
      scope: 'task',
      task_id: 2,
      dimension: 'tokens',
      committed: 50,
      requested: 0,
      budget: 50,
    });
  });

  it("the task's own open reservation is not counted twice: a claim after an expired lease replaces it", () => {
    spec(taskDecider)
      .given([created()])
      .when(withBudget([goalLine(100)], 20, { tokens: 0, cents: 20 }))
      .then([claimedFor(20)]);
  });

  it('only a claim that would be made meets the gate: not a renewal, nor a task another agent holds', () => {
    const spent = withBudget([goalLine(100)]);
    spec(taskDecider)
      .given([created(), claimed(worker)])
      .when(spent, { now: at(20) })
      .then([
        {
          ...renewed(worker, at(20), 'claimed'),
          data: { ...renewed(worker, at(20), 'claimed').data, reservation: { tokens: 0, cents: 20 } },
        },
      ]);
    spec(taskDecider)
      .given([created(), claimed(helper)])
      .when(spent, { now: at(5) })
      .thenThrows('ErrAlreadyClaimed');
    spec(taskDecider).given(awaiting()).when(spent).thenThrows('ErrTaskNotApproved');
    spec(taskDecider)
      .given([created()])
      .when({ ...spent, goalStatus: 'completed' } as TaskCommand)
      .thenThrows('ErrGoalClosed');
  });

  it('budgetRefusal: tokens before cents within a budget, lines in order', () => {
    assert.equal(budgetRefusal([], { tokens: 5, cents: 5 }), null);
    const both: BudgetLine = {
      scope: 'goal',
      taskId: 0,
      budget: { tokens: 10, cents: 10 },
      committed: { tokens: 10, cents: 10 },
    };
    assert.equal(budgetRefusal([both], { tokens: 0, cents: 0 })?.dimension, 'tokens');
  });
});
