import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoryIds } from '../../src/engine/ids.js';
import { taskDecider } from '../../src/commands/tasks.js';
import { projectTaskDecider } from '../../src/commands/project-tasks.js';
import type { BlockerFact } from '../../src/commands/task-dependencies.js';
import type { SetTaskBlockers, TaskCommand } from '../../src/commands/task-types.js';
import type { TaskCreated, TaskEvent } from '../../src/events/tasks.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * Task dependencies in the task decider, given/when/then: set_task_blockers (who may, what is refused, the
 * event and its notice, a cycle refused with the cycle) and the claim that waits for every blocker.
 */
const owner = { key: 'user-1', name: 'owner' };
const coordinator = { key: 'agent-2', name: 'coord' };
const stranger = { key: 'agent-9', name: 'mallory' };

const created = (extra: Partial<TaskCreated['data']> = {}): TaskCreated => ({
  type: 'TaskCreated',
  data: {
    taskId: 7,
    goalId: 1,
    parentId: null,
    depth: 0,
    ancestry: [],
    title: 'Ship it',
    description: 'Ship the release',
    acceptanceCriteria: '',
    billingCode: 'default',
    budgets: { tokens: null, cents: null },
    verifier: { kind: 'auto' },
    heartbeat: null,
    status: 'approved',
    proposalId: 2,
    channelId: 3,
    by: owner,
    notice: { messageId: 1, channelId: 3, body: 'created', metadata: {} },
    ...extra,
  },
});
const fact = (taskId: number, status: BlockerFact['status'] = 'approved', goalId: number | null = 1): BlockerFact => ({
  taskId,
  title: `task ${taskId}`,
  status,
  goalId,
  projectId: null,
});
const setBlockers = (blockedBy: number[], extra: Partial<SetTaskBlockers> = {}): TaskCommand => ({
  type: 'SetTaskBlockers',
  blockedBy,
  by: coordinator,
  found: [fact(3), fact(4, 'done'), fact(5)],
  graph: new Map(),
  ownerId: 1,
  coordinatorAgentId: 2,
  ...extra,
});
const claim = (blockers: { taskId: number; status: BlockerFact['status'] }[]): TaskCommand => ({
  type: 'ClaimTask',
  agent: { agentId: 4, name: 'worker', quarantined: false },
  leaseMs: 60_000,
  reservation: { tokens: 0, cents: 0 },
  goalStatus: 'active',
  inVerifierLineage: false,
  budget: { lines: [], replaces: { tokens: 0, cents: 0 } },
  blockers,
});
const blockersSet = (blockedBy: number[], previous: number[] = []): TaskEvent => ({
  type: 'TaskBlockersSet',
  data: {
    taskId: 7,
    goalId: 1,
    blockedBy,
    previous,
    by: coordinator,
    notice: {
      messageId: 10,
      channelId: 3,
      body: `Task #7 "Ship it": blocked by ${blockedBy.map((id) => `#${id}`).join(', ')} (set by coord; 1 not done yet)`,
      metadata: {
        kind: 'system',
        goal_id: 1,
        task_id: 7,
        event: 'TaskBlockersSet',
        blocked_by: blockedBy,
        previous,
        actor: 'coord',
      },
    },
  },
});

describe('task blockers (decider)', () => {
  it("the goal's coordinator sets them: TaskBlockersSet with its notice; the same list again writes nothing", () => {
    spec(taskDecider)
      .given([created()])
      .when(setBlockers([3, 4]), { ids: { message: 9 } })
      .then([blockersSet([3, 4])]);
    spec(taskDecider)
      .given([created(), blockersSet([3, 4])])
      .when(setBlockers([3, 4]))
      .thenNothingHappened();
  });

  it('refuses an agent that is not the owner, creator, assignee or coordinator', () => {
    spec(taskDecider)
      .given([created()])
      .when(setBlockers([3], { by: stranger }))
      .thenThrows('ErrForbidden');
  });

  it('refuses an unknown task, another goal, itself, a duplicate, more than 32, a closed task', () => {
    const given = spec(taskDecider).given([created()]);
    given.when(setBlockers([99])).thenThrows('ErrTaskNotFound', 'task 99 not found');
    given.when(setBlockers([8], { found: [fact(8, 'approved', 2)] })).thenThrows('ErrInvalidInput', 'goal #2');
    given.when(setBlockers([7])).thenThrows('ErrInvalidInput', 'itself');
    given.when(setBlockers([3, 3])).thenThrows('ErrInvalidInput', 'twice');
    const many = Array.from({ length: 33 }, (_, i) => i + 100);
    given.when(setBlockers(many, { found: many.map((id) => fact(id)) })).thenThrows('ErrInvalidInput', 'at most 32');
    spec(taskDecider)
      .given([created({ status: 'proposed' }), { type: 'TaskCancelled', data: cancelled }])
      .when(setBlockers([3]))
      .thenThrows('ErrTaskClosed');
  });

  it('refuses a list that would close a cycle, naming it in order', () => {
    // 3 waits on 5, 5 waits on 7: 7 waiting on 3 closes 7 → 3 → 5 → 7.
    const graph = new Map([
      [3, [5]],
      [5, [7]],
    ]);
    const e = spec(taskDecider)
      .given([created()])
      .when(setBlockers([3], { graph }))
      .thenThrows('ErrDependencyCycle');
    assert.deepEqual(e.details?.cycle, [7, 3, 5, 7]);
  });

  it('a claim waits for every blocker to be done (ErrTaskBlocked names them); then it is claimed', () => {
    const given = spec(taskDecider).given([created({ blockedBy: [3, 4] })]);
    given
      .when(
        claim([
          { taskId: 3, status: 'in_progress' },
          { taskId: 4, status: 'done' },
        ]),
      )
      .thenThrows('ErrTaskBlocked', 'blocked by #3 \\(in_progress\\)');
    given.when(claim([])).thenFailsAsBug(/blockers as facts/);
    spec(taskDecider)
      .given([created(), blockersSet([3])])
      .when(claim([{ taskId: 3, status: 'cancelled' }]))
      .thenThrows('ErrTaskBlocked');
    const state = taskDecider.evolve(taskDecider.initialState(), created({ blockedBy: [3, 4] }));
    const ctx = { now: '2026-01-01T00:00:00.000Z', actor: 't', ids: memoryIds({ message: 5 }) };
    const events = taskDecider.decide(
      claim([
        { taskId: 3, status: 'done' },
        { taskId: 4, status: 'done' },
      ]),
      state,
      ctx,
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['TaskClaimed'],
    );
  });

  it("a project task's blockers are tasks of its project, checked when it is created", () => {
    const task = { ...created({ goalId: null, projectId: 5, status: 'proposed', blockedBy: [3] }).data };
    const { notice: _n, ...rest } = task;
    spec(projectTaskDecider)
      .given([])
      .when({ type: 'CreateProjectTask', task: rest, found: [fact(3, 'approved', 1)] })
      .thenThrows('ErrInvalidInput', 'not in project #5');
  });
});

const cancelled = {
  taskId: 7,
  reason: 'dropped',
  from: 'proposed' as const,
  by: owner,
  notice: { messageId: 2, channelId: 3, body: 'x', metadata: {} },
};
