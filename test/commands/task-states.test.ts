import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { taskDecider } from '../../src/commands/tasks.js';
import { DomainError } from '../../src/errors.js';
import { type TaskCreated } from '../../src/events/tasks.js';
import { XYLOCOPA_STATUS } from '../../src/events/task-status.js';
import { type Task, type TaskCommand } from '../../src/commands/task-types.js';

/**
 * xylocopa's task state machine (reference §1.6) mapped onto Colony's statuses (DESIGN §2, §3.5), on the
 * decider alone. Each xylocopa edge is either reached by a Colony command (named) or deliberately not
 * (the comment says what Colony does instead).
 */
const T0 = '2026-05-01T10:00:00.000Z';
let ids = 0;
const ctx = { now: T0, actor: 'tester', ids: { next: () => ++ids } };
const agent = { agentId: 7, name: 'worker' };
const by = { key: 'user-1', name: 'owner' };

function run(state: Task, command: TaskCommand): Task {
  return taskDecider.decide(command, state, ctx).reduce((s, e) => taskDecider.evolve(s, e), state);
}
function refuses(state: Task, command: TaskCommand): boolean {
  try {
    run(state, command);
    return false;
  } catch (e) {
    if (e instanceof DomainError) return true;
    throw e;
  }
}
const created = (verifier: TaskCreated['data']['verifier'] = { kind: 'auto' }): Task =>
  run(taskDecider.initialState(), {
    type: 'CreateTask',
    task: {
      taskId: 1,
      goalId: null,
      ownerId: 1,
      projectId: 1,
      parentId: null,
      depth: 0,
      ancestry: [],
      title: 'A task',
      description: 'd',
      acceptanceCriteria: '',
      billingCode: 'p',
      budgets: { tokens: null, cents: null },
      verifier,
      heartbeat: null,
      status: 'proposed',
      proposalId: null,
      channelId: 1,
      by,
    },
  });
const x = (s: Task): string => (s.status === 'absent' ? 'absent' : XYLOCOPA_STATUS[s.status]);

const claim: TaskCommand = {
  type: 'ClaimTask',
  agent: { ...agent, quarantined: false },
  leaseMs: 60_000,
  reservation: { tokens: 0, cents: 0 },
  goalStatus: null,
  inVerifierLineage: false,
  budget: null,
  blockers: [],
};
const dispatch: TaskCommand = { type: 'DispatchTask', by };
const cancel: TaskCommand = { type: 'CancelTask', reason: 'dropped', by, ownerId: 1 };
const complete: TaskCommand = {
  type: 'CompleteTask',
  agent,
  summary: 'done',
  artifactMessageIds: [],
  ownerVerifies: false,
};
const timeOut: TaskCommand = { type: 'TimeOutTask', agentId: 7, runId: 3, reason: 'run 3 timed out' };
const inbox = () => created();
const pending = () => run(inbox(), dispatch);
const executing = () => run(pending(), claim);
/** A peer-verified task whose peer rejected the work. */
const failed = () =>
  run(run(run(run(created({ kind: 'peer', agent_id: 9 }), dispatch), claim), complete), {
    type: 'VerifyTask',
    verdict: 'reject',
    reason: 'wrong',
    verifier: { key: 'agent-9', name: 'rev' },
    as: { kind: 'peer', agentId: 9 },
    assigneeInVerifierLineage: false,
    retry: null,
  });
const timedOut = () => run(executing(), timeOut);

describe('xylocopa §1.6 on Colony', () => {
  it('INBOX → PENDING (task_dispatch), CANCELLED (cancel_task); not EXECUTING or COMPLETE directly (Colony claims only PENDING tasks)', () => {
    assert.equal(x(run(inbox(), dispatch)), 'PENDING');
    assert.equal(x(run(inbox(), cancel)), 'CANCELLED');
    assert.ok(refuses(inbox(), claim), 'INBOX → EXECUTING: dispatch first');
    assert.ok(refuses(inbox(), complete), 'INBOX → COMPLETE: only through work');
  });

  it('PENDING → EXECUTING (claim_task), CANCELLED; a second dispatch writes nothing (no self-transition)', () => {
    assert.equal(x(run(pending(), claim)), 'EXECUTING');
    assert.equal(x(run(pending(), cancel)), 'CANCELLED');
    assert.deepEqual(taskDecider.decide(dispatch, pending(), ctx), []);
  });

  it('EXECUTING → REVIEW/COMPLETE (complete_task; auto verifier), TIMEOUT (its run timed out), CANCELLED; release goes back to PENDING, not INBOX', () => {
    assert.equal(x(run(executing(), complete)), 'COMPLETE');
    assert.equal(x(run(executing(), timeOut)), 'TIMEOUT');
    assert.equal(x(run(executing(), cancel)), 'CANCELLED');
    assert.equal(x(run(executing(), { type: 'ReleaseTask', agent, reason: 'later' })), 'PENDING');
  });

  it('FAILED and TIMEOUT → PENDING (task_dispatch: a new attempt) or CANCELLED; never EXECUTING directly', () => {
    for (const make of [failed, timedOut]) {
      const again = run(make(), dispatch);
      assert.equal(x(again), 'PENDING');
      assert.equal(again.status !== 'absent' && again.attempt, 2);
      assert.equal(x(run(make(), cancel)), 'CANCELLED');
      assert.ok(refuses(make(), claim));
    }
    assert.equal(x(failed()), 'FAILED');
  });

  it('COMPLETE and CANCELLED are terminal', () => {
    const done = run(executing(), complete);
    const dropped = run(pending(), cancel);
    for (const s of [done, dropped]) {
      for (const c of [dispatch, claim, cancel])
        assert.ok(refuses(s, c) || taskDecider.decide(c, s, ctx).length === 0, `${x(s)} stays`);
    }
  });
});
