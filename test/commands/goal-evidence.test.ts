import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goalDecider, type GoalCommand, type UnverifiedLeaves } from '../../src/commands/goals.js';
import type { DecideContext } from '../../src/engine/decider.js';
import { memoryIds } from '../../src/engine/ids.js';
import type { GoalCreated, GoalEvent } from '../../src/events/goals.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * "Done only with evidence", the goal decider's side (issue 34, Must 2): the owner's rule (on/off and the
 * retry limit), set by the owner alone, on an open goal, the same rule again writing nothing; goals from
 * before the rule (no field in GoalCreated) have it off with no retries; and completing a goal that
 * requires evidence is refused while leaves are not done, naming them — without the fact, a bug.
 */
const owner = { key: 'user-1', name: 'owner' };
const coordinator = { key: 'agent-2', name: 'coord' };

function created(rule: Partial<Pick<GoalCreated['data'], 'requireEvidence' | 'maxRejections'>>): GoalCreated {
  return {
    type: 'GoalCreated',
    data: {
      goalId: 1,
      ownerId: 1,
      slug: 'keep-docs-fresh',
      title: 'Keep docs fresh',
      description: 'Keep every page accurate',
      channelId: 3,
      coordinatorAgentId: 2,
      coordinatorTemplate: 'default',
      budgets: { tokens: null, cents: null },
      maxSpawnDepth: 3,
      approvalMode: 'human',
      ...rule,
      by: 'owner',
    },
  };
}
const activated: GoalEvent = {
  type: 'GoalActivated',
  data: { goalId: 1, from: 'draft', proposalId: 4, notice: null as never },
};
const ctx: DecideContext = { now: '2026-01-01T00:00:00.000Z', actor: 'tester', ids: memoryIds({ message: 9 }) };
const stateOf = (events: readonly GoalEvent[]) =>
  events.reduce((s, e) => goalDecider.evolve(s, e), goalDecider.initialState());
const decide = (events: readonly GoalEvent[], c: GoalCommand) => goalDecider.decide(c, stateOf(events), ctx);
const set = (rule: { requireEvidence?: boolean; maxRejections?: number }, by = owner): GoalCommand => ({
  type: 'SetEvidenceRule',
  ...rule,
  by,
});
const close = (unverified?: UnverifiedLeaves, by = owner): GoalCommand => ({
  type: 'CloseGoal',
  to: 'completed',
  summary: 'all pages checked',
  by,
  unverified,
});

describe('the evidence rule of a goal', () => {
  it('a goal created before the rule has it off with no retries; a new one carries its own', () => {
    const old = stateOf([created({})]);
    assert.ok(old.status !== 'absent' && old.requireEvidence === false && old.maxRejections === 0);
    const fresh = stateOf([created({ requireEvidence: true, maxRejections: 2 })]);
    assert.ok(fresh.status !== 'absent' && fresh.requireEvidence === true && fresh.maxRejections === 2);
  });

  it('an agent may create a goal with the rule on, never off', () => {
    const agentGoal = (requireEvidence: boolean): GoalCommand => {
      const { data } = created({ requireEvidence, maxRejections: 2 });
      return { type: 'CreateGoal', goal: data, by: coordinator };
    };
    assert.equal(decide([], agentGoal(true))[0]?.type, 'GoalCreated');
    spec(goalDecider).given([]).when(agentGoal(false)).thenThrows('ErrForbidden', "owner's choice");
    assert.equal(
      decide([], { type: 'CreateGoal', goal: created({ requireEvidence: false }).data, by: owner })[0]?.type,
      'GoalCreated',
    );
  });

  it('the owner sets it (one event with from, to and a notice); the same rule again writes nothing', () => {
    const history = [created({ requireEvidence: true, maxRejections: 2 }), activated];
    const [e, ...more] = decide(history, set({ requireEvidence: false, maxRejections: 5 }));
    assert.equal(more.length, 0);
    assert.equal(e?.type, 'GoalEvidenceRuleSet');
    const d = (e as Extract<GoalEvent, { type: 'GoalEvidenceRuleSet' }>).data;
    assert.deepEqual(
      [d.from, d.to, d.by],
      [{ requireEvidence: true, maxRejections: 2 }, { requireEvidence: false, maxRejections: 5 }, 'owner'],
    );
    assert.match(
      d.notice.body,
      /auto verifiers may mark leaves done; a rejected hand-in goes back .* up to 5 times — set by owner/,
    );
    const after = stateOf([...history, e!]);
    assert.ok(after.status !== 'absent' && !after.requireEvidence && after.maxRejections === 5);
    spec(goalDecider)
      .given(history)
      .when(set({ requireEvidence: true }))
      .thenNothingHappened();
    // Half a rule keeps the other half.
    const half = decide(history, set({ maxRejections: 0 }))[0] as Extract<GoalEvent, { type: 'GoalEvidenceRuleSet' }>;
    assert.deepEqual(half.data.to, { requireEvidence: true, maxRejections: 0 });
  });

  it('refused to the coordinator, out of range, and on a closed goal', () => {
    const history = [created({ requireEvidence: true, maxRejections: 2 }), activated];
    spec(goalDecider)
      .given(history)
      .when(set({ requireEvidence: false }, coordinator))
      .thenThrows('ErrForbidden', 'only the owner');
    for (const maxRejections of [-1, 11, 1.5])
      spec(goalDecider).given(history).when(set({ maxRejections })).thenThrows('ErrInvalidInput', 'max_rejections');
    const done = [...history, ...decide(history, close({ count: 0, first: [] }))];
    spec(goalDecider)
      .given(done)
      .when(set({ requireEvidence: false }))
      .thenThrows('ErrGoalClosed');
  });
});

describe('completing a goal that requires evidence', () => {
  const history = [created({ requireEvidence: true, maxRejections: 2 }), activated];

  it('is refused while leaves are not done, naming them and how many more', () => {
    const first = Array.from({ length: 10 }, (_, i) => ({ taskId: i + 5, status: 'awaiting_verification' }));
    const err = spec(goalDecider)
      .given(history)
      .when(close({ count: 12, first }))
      .thenThrows('ErrUnverifiedLeaves');
    assert.match(
      err.message,
      /12 of its leaf tasks are not done by a verdict .*#5 \(awaiting_verification\), .*#14 \(awaiting_verification\) and 2 more/,
    );
    assert.equal((err.details as { tasks: unknown[] }).tasks.length, 10);
  });

  it('completes with every leaf verified; stuck and cancelled need no evidence; a goal without the rule needs none', () => {
    assert.equal(decide(history, close({ count: 0, first: [] }))[0]?.type, 'GoalClosed');
    const stuck: GoalCommand = { type: 'CloseGoal', to: 'stuck', summary: 'blocked', by: owner };
    assert.equal(decide(history, stuck)[0]?.type, 'GoalClosed');
    const old = [created({}), activated];
    assert.equal(decide(old, close({ count: 3, first: [{ taskId: 5, status: 'claimed' }] }))[0]?.type, 'GoalClosed');
  });

  it('without the fact it is a caller bug, never a pass', () => {
    spec(goalDecider)
      .given(history)
      .when(close(undefined))
      .thenFailsAsBug(/unverified leaves/);
  });
});
