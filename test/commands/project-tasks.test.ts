import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  projectTaskDecider,
  type ProjectTaskCommand,
  type UpdateProjectTask,
} from '../../src/commands/project-tasks.js';
import type { CreateTask, TaskCommand } from '../../src/commands/task-types.js';
import { taskDecider } from '../../src/commands/tasks.js';
import type { DecideContext } from '../../src/engine/decider.js';
import { memoryIds } from '../../src/engine/ids.js';
import type { Notice } from '../../src/events/notices.js';
import type { TaskCancelled, TaskEvent, TaskTimedOut, TaskUpdated } from '../../src/events/tasks.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * xylocopa's task_create / task_update / task_dispatch rules in front of the task decider, given/when/then:
 * what each refuses with xylocopa's texts (nothing written), and that an accepted command decides exactly
 * what the task decider decides for CreateTask, UpdateTask and DispatchTask.
 */
const T0 = '2026-01-01T00:00:00.000Z';
const by = { key: 'agent-3', name: 'worker' };
const ctx = (): DecideContext => ({ now: T0, actor: 'tester', ids: memoryIds() });
const notice: Notice = { messageId: 1, channelId: 5, body: 'notice', metadata: {} };

const task = (extra: Partial<CreateTask['task']> = {}): CreateTask['task'] => ({
  taskId: 7,
  goalId: null,
  ownerId: 1,
  projectId: 1,
  parentId: null,
  depth: 0,
  ancestry: [],
  title: 'Fix the docs',
  description: 'Every page',
  acceptanceCriteria: '',
  billingCode: 'site',
  budgets: { tokens: null, cents: null },
  verifier: { kind: 'auto' },
  heartbeat: null,
  status: 'proposed',
  proposalId: null,
  channelId: 5,
  by,
  plan: { model: 'claude-opus-5', effort: 'high', priority: 1 },
  ...extra,
});
/** What the task decider alone decides, from the state the events lead to. */
const taskDecides = (command: TaskCommand, given: readonly TaskEvent[] = []): readonly TaskEvent[] =>
  taskDecider.decide(
    command,
    given.reduce((s, e) => taskDecider.evolve(s, e), taskDecider.initialState()),
    ctx(),
  );
const created = (extra: Partial<CreateTask['task']> = {}): TaskEvent =>
  taskDecides({ type: 'CreateTask', task: task(extra) })[0]!;
const cancelled: TaskCancelled = {
  type: 'TaskCancelled',
  data: { taskId: 7, reason: 'not needed', from: 'proposed', by, notice },
};
const timedOut: TaskTimedOut = {
  type: 'TaskTimedOut',
  data: { taskId: 7, agentId: 3, runId: 2, reason: 'timed out', from: 'in_progress', notice },
};

describe('task_create (CreateProjectTask)', () => {
  it('creates the task as the task decider does', () => {
    spec(projectTaskDecider)
      .given([])
      .when({ type: 'CreateProjectTask', task: task() })
      .then(taskDecides({ type: 'CreateTask', task: task() }));
  });

  it('refuses an empty or blank title (xylocopa could never dispatch it)', () => {
    for (const title of ['', '  \n'])
      spec(projectTaskDecider)
        .given([])
        .when({ type: 'CreateProjectTask', task: task({ title }) })
        .thenThrows('ErrInvalidInput', '^Validation error:\ntitle: must not be empty or only whitespace$');
  });

  it('lists every problem of title, description, model and effort in one Validation error', () => {
    const bad = task({
      title: 'x'.repeat(301),
      description: 'y'.repeat(50_001),
      plan: { model: 'gpt-4', effort: 'huge', priority: 0 },
    });
    const e = spec(projectTaskDecider)
      .given([])
      .when({ type: 'CreateProjectTask', task: bad })
      .thenThrows('ErrInvalidInput');
    const lines = e.message.split('\n');
    assert.equal(lines[0], 'Validation error:');
    assert.equal(lines[1], 'title: at most 300 characters (got 301)');
    assert.equal(lines[2], 'description: at most 50000 characters');
    assert.match(lines[3]!, /^model: must be one of claude-fable-5-1, .* \(got 'gpt-4'\)$/);
    assert.equal(lines[4], "effort: must be one of low|medium|high|xhigh|max|ultracode (got 'huge')");
  });

  it('no model and no effort are fine (the project defaults)', () => {
    const plain = task({ plan: { model: null, effort: null, priority: 0 } });
    spec(projectTaskDecider)
      .given([])
      .when({ type: 'CreateProjectTask', task: plain })
      .then(taskDecides({ type: 'CreateTask', task: plain }));
  });
});

describe('task_update (UpdateProjectTask)', () => {
  const current: UpdateProjectTask['current'] = {
    title: 'Fix the docs',
    description: 'Every page',
    model: 'claude-opus-5',
    effort: 'high',
    priority: 1,
    projectId: 1,
  };
  const edit = (
    e: Partial<UpdateProjectTask['edit']>,
    project: UpdateProjectTask['project'] = null,
  ): ProjectTaskCommand => ({
    type: 'UpdateProjectTask',
    edit: { title: '', description: '', model: '', effort: '', priority: null, ...e },
    project,
    current,
    by,
  });
  const updated = (changes: TaskUpdated['data']['changes'], labels: string[]): TaskUpdated => ({
    type: 'TaskUpdated',
    data: { taskId: 7, changes, labels, by },
  });

  it("changes the given fields that differ, labelled in xylocopa's order", () => {
    spec(projectTaskDecider)
      .given([created()])
      .when(edit({ priority: 3, effort: 'low', title: 'Fix all docs' }, { projectId: 2, name: 'docs' }))
      .then([
        updated({ projectId: 2, title: 'Fix all docs', effort: 'low', priority: 3 }, [
          'project=docs',
          'title',
          'effort=low',
          'priority=3',
        ]),
      ]);
  });

  it('empty fields, and fields equal to the current ones, change nothing', () => {
    spec(projectTaskDecider).given([created()]).when(edit({})).thenNothingHappened();
    spec(projectTaskDecider)
      .given([created()])
      .when(edit({ title: 'Fix the docs', model: 'claude-opus-5', priority: 1 }, { projectId: 1, name: 'site' }))
      .thenNothingHappened();
  });

  it('refuses a new title or description that is too long', () => {
    spec(projectTaskDecider)
      .given([created()])
      .when(edit({ title: 'x'.repeat(301), description: 'y'.repeat(50_001) }))
      .thenThrows(
        'ErrInvalidInput',
        '^Validation error:\ntitle: at most 300 characters \\(got 301\\)\ndescription: at most 50000 characters$',
      );
  });
});

describe('task_dispatch (DispatchProjectTask)', () => {
  const dispatch: ProjectTaskCommand = { type: 'DispatchProjectTask', by };

  it('INBOX and TIMEOUT go to PENDING as the task decider decides (a timed-out task as a new attempt)', () => {
    spec(projectTaskDecider)
      .given([created()])
      .when(dispatch)
      .then(taskDecides({ type: 'DispatchTask', by }, [created()]));
    spec(projectTaskDecider)
      .given([created(), timedOut])
      .when(dispatch)
      .then(taskDecides({ type: 'DispatchTask', by }, [created(), timedOut]));
  });

  it('a task already PENDING is left as it is', () => {
    const pending = taskDecides({ type: 'DispatchTask', by }, [created()]);
    spec(projectTaskDecider)
      .given([created(), ...pending])
      .when(dispatch)
      .thenNothingHappened();
  });

  it('refuses a task without a title, then any status but INBOX, FAILED, TIMEOUT and PENDING', () => {
    const untitled = spec(projectTaskDecider)
      .given([created({ title: '' }), cancelled])
      .when(dispatch)
      .thenThrows('ErrNoTitle', '^Task 7 has no title set; cannot dispatch\\.$');
    assert.deepEqual(untitled.details, { task_id: 7 });
    const illegal = spec(projectTaskDecider)
      .given([created(), cancelled])
      .when(dispatch)
      .thenThrows('ErrIllegalTransition', '^Task 7 cannot transition from CANCELLED to PENDING\\.$');
    assert.deepEqual(illegal.details, { task_id: 7, from: 'cancelled' });
  });
});
