import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goalCanMove, goalDecider, type GoalCommand, type Spend } from '../../src/commands/goals.js';
import { checkTree, planTree, slugify, SLUG_MAX } from '../../src/commands/task-tree.js';
import { DomainError } from '../../src/errors.js';
import {
  GOAL_STATUSES,
  type BudgetAlertRaised,
  type Budgets,
  type ClosingStatus,
  type GoalCreated,
  type GoalEvent,
  type GoalPaused,
  type GoalResumed,
  type GoalStatus,
} from '../../src/events/goals.js';
import type { Notice } from '../../src/events/notices.js';
import type { TreeNode } from '../../src/events/proposals.js';
import { ANCESTRY_CAP_BYTES } from '../../src/events/tasks.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The goal decider — who may create, close, resume it or switch its approval mode, the legal transition
 * table, the 80 % alert once per budget, the pause at 100 %, resume with its re-arm rule — and the pure
 * task-tree functions: planning (ids, depth, ancestry, billing inheritance), checking (cascade, ancestry
 * cap) and slugs (upstream TestCreateTree_AncestryAndDepth / _AncestryOverflow).
 */
const owner = { key: 'user-1', name: 'owner' };
const TITLE = 'Keep docs fresh';

const notice = (messageId: number, body: string, metadata: Record<string, unknown>): Notice => ({
  messageId,
  channelId: 3,
  body,
  metadata: { kind: 'system', goal_id: 1, ...metadata },
});

function created(budgets: Budgets = { tokens: null, cents: 100 }): GoalCreated {
  return {
    type: 'GoalCreated',
    data: {
      goalId: 1,
      ownerId: 1,
      slug: 'keep-docs-fresh',
      title: TITLE,
      description: 'Keep every page accurate',
      channelId: 3,
      coordinatorAgentId: 2,
      coordinatorTemplate: 'default',
      budgets,
      maxSpawnDepth: 3,
      approvalMode: 'human',
      by: 'owner',
    },
  };
}
const activated: GoalEvent = {
  type: 'GoalActivated',
  data: {
    goalId: 1,
    from: 'draft',
    proposalId: 4,
    notice: notice(1, `Goal "${TITLE}": draft → active (task tree approved by owner)`, {
      event: 'GoalActivated',
      from: 'draft',
      to: 'active',
      actor: 'owner',
    }),
  },
};
type GoalClosedData = Extract<GoalEvent, { type: 'GoalClosed' }>['data'];
const closed = (from: GoalStatus, to: ClosingStatus, summary = 'done'): GoalEvent => ({
  type: 'GoalClosed',
  data: {
    goalId: 1,
    from,
    to,
    summary,
    by: 'owner',
    notice: notice(1, `Goal "${TITLE}": ${from} → ${to} by owner: ${summary}`, {
      event: 'GoalClosed',
      from,
      to,
      actor: 'owner',
    }),
  },
});
const alert = (dimension: 'tokens' | 'cents', spent: number, budget: number, messageId = 1): BudgetAlertRaised => {
  const percent = Math.floor((spent / budget) * 100);
  const unit = dimension === 'tokens' ? 'tokens' : '¢';
  return {
    type: 'BudgetAlertRaised',
    data: {
      goalId: 1,
      dimension,
      spent,
      budget,
      percent,
      notice: notice(
        messageId,
        `⚠️ Budget soft alert: goal "${TITLE}" has used ${percent}% of its ${dimension} budget (${spent} of ${budget} ${unit})`,
        { event: 'BudgetAlertRaised', dimension, spent, budget, percent },
      ),
    },
  };
};
const pausedBySpend = (dimension: 'tokens' | 'cents', spent: number, budget: number, messageId = 1): GoalPaused => {
  const percent = Math.floor((spent / budget) * 100);
  const unit = dimension === 'tokens' ? 'tokens' : '¢';
  return {
    type: 'GoalPaused',
    data: {
      goalId: 1,
      from: 'active',
      reason: 'budget',
      dimension,
      spent,
      requested: 0,
      budget,
      notice: notice(
        messageId,
        `🛑 Budget hard cap: goal "${TITLE}" at ${percent}% of its ${dimension} budget (${spent} of ${budget} ${unit}): active → paused`,
        { event: 'GoalPaused', from: 'active', to: 'paused', dimension, spent, budget, percent },
      ),
    },
  };
};
const resumed = (from: GoalStatus, budgets: Budgets, rearm: { tokens: boolean; cents: boolean }): GoalResumed => ({
  type: 'GoalResumed',
  data: {
    goalId: 1,
    from,
    budgets,
    rearm,
    notice: notice(
      1,
      `Goal "${TITLE}": ${from} → active by owner (budget ${budgets.tokens ?? '∞'} tokens, ${budgets.cents ?? '∞'} ¢)`,
      { event: 'GoalResumed', from, to: 'active', actor: 'owner' },
    ),
  },
});

const spend = (cents: number, tokens = 0): GoalCommand => ({ type: 'ApplySpend', spent: { tokens, cents } });
const resume = (budgets: Partial<Budgets>, spent: Spend): GoalCommand => ({
  type: 'ResumeGoal',
  budgets,
  spent,
  by: owner,
});
const close = (to: ClosingStatus, summary = 'done'): GoalCommand => ({ type: 'CloseGoal', to, summary, by: owner });
const stateAfter = (events: readonly GoalEvent[]) =>
  events.reduce((s, e) => goalDecider.evolve(s, e), goalDecider.initialState());

/** A history that leaves the goal in `status`. */
function historyTo(status: GoalStatus): GoalEvent[] {
  switch (status) {
    case 'draft':
      return [created()];
    case 'active':
      return [created(), activated];
    case 'paused':
      return [created(), activated, pausedBySpend('cents', 100, 100)];
    case 'stuck':
      return [created(), activated, closed('active', 'stuck')];
    case 'completed':
      return [created(), activated, closed('active', 'completed')];
    case 'cancelled':
      return [created(), closed('draft', 'cancelled')];
  }
}

describe('goal decider: lifecycle', () => {
  it('creates a draft goal once', () => {
    spec(goalDecider).given([]).when({ type: 'CreateGoal', goal: created().data, by: owner }).then([created()]);
    spec(goalDecider)
      .given([created()])
      .when({ type: 'CreateGoal', goal: created().data, by: owner })
      .thenThrows('ErrGoalExists');
    assert.equal(stateAfter([created()]).status, 'draft');
  });

  it('refuses commands on a goal that does not exist', () => {
    for (const c of [
      spend(1),
      resume({}, { tokens: 0, cents: 0 }),
      close('completed'),
      { type: 'ActivateGoal', proposalId: null, by: owner } as GoalCommand,
    ]) {
      spec(goalDecider).given([]).when(c).thenThrows('ErrGoalNotFound');
    }
  });

  it('an approved tree activates a draft goal; on any other goal it changes nothing', () => {
    const activate: GoalCommand = { type: 'ActivateGoal', proposalId: 4, by: owner };
    spec(goalDecider).given([created()]).when(activate).then([activated]);
    for (const status of ['active', 'paused', 'stuck', 'completed', 'cancelled'] as const) {
      spec(goalDecider).given(historyTo(status)).when(activate).thenNothingHappened();
    }
  });

  it("the exported transition table is SynapBus's table, exactly", () => {
    const legal: Record<GoalStatus, GoalStatus[]> = {
      draft: ['active', 'completed', 'stuck', 'cancelled'],
      active: ['paused', 'completed', 'stuck', 'cancelled'],
      paused: ['active', 'completed', 'stuck', 'cancelled'],
      stuck: ['active', 'completed', 'cancelled'],
      completed: [],
      cancelled: [],
    };
    for (const from of GOAL_STATUSES) {
      for (const to of GOAL_STATUSES) assert.equal(goalCanMove(from, to), legal[from].includes(to), `${from} → ${to}`);
    }
  });

  it('complete_goal moves along the table; the same status again is a no-op; terminal goals refuse', () => {
    const legal: Record<GoalStatus, ClosingStatus[]> = {
      draft: ['completed', 'stuck', 'cancelled'],
      active: ['completed', 'stuck', 'cancelled'],
      paused: ['completed', 'stuck', 'cancelled'],
      stuck: ['completed', 'cancelled'],
      completed: [],
      cancelled: [],
    };
    for (const from of GOAL_STATUSES) {
      for (const to of ['completed', 'stuck', 'cancelled'] as const) {
        const s = spec(goalDecider).given(historyTo(from)).when(close(to));
        if (from === to) s.thenNothingHappened();
        else if (legal[from].includes(to)) s.then([closed(from, to)]);
        else assert.deepEqual(s.thenThrows('ErrIllegalTransition', `${from} → ${to}`).details, { from, to });
      }
    }
  });

  it('a stuck or paused goal resumes to active; draft, completed and cancelled goals refuse', () => {
    const budgets = { tokens: null, cents: 100 };
    spec(goalDecider)
      .given(historyTo('stuck'))
      .when(resume({}, { tokens: 0, cents: 10 }))
      .then([resumed('stuck', budgets, { tokens: false, cents: true })]);
    spec(goalDecider)
      .given(historyTo('paused'))
      .when(resume({ cents: 500 }, { tokens: 0, cents: 100 }))
      .then([resumed('paused', { tokens: null, cents: 500 }, { tokens: false, cents: true })]);
    for (const status of ['draft', 'completed', 'cancelled'] as const) {
      spec(goalDecider)
        .given(historyTo(status))
        .when(resume({ cents: 500 }, { tokens: 0, cents: 0 }))
        .thenThrows('ErrIllegalTransition', `${status} → active`);
    }
    assert.equal(
      stateAfter([
        ...historyTo('paused'),
        resumed('paused', { tokens: null, cents: 500 }, { tokens: false, cents: true }),
      ]).status,
      'active',
    );
  });

  it('resuming an active goal without new budgets changes nothing; with new budgets it records them', () => {
    spec(goalDecider)
      .given(historyTo('active'))
      .when(resume({}, { tokens: 0, cents: 10 }))
      .thenNothingHappened();
    spec(goalDecider)
      .given(historyTo('active'))
      .when(resume({ tokens: 1000 }, { tokens: 0, cents: 10 }))
      .then([resumed('active', { tokens: 1000, cents: 100 }, { tokens: true, cents: true })]);
  });

  it('work refused for budget pauses an active goal only', () => {
    const pause: GoalCommand = {
      type: 'PauseForBudget',
      dimension: 'cents',
      spent: 85,
      requested: 40,
      by: { key: 'agent-3', name: 'worker' },
    };
    spec(goalDecider)
      .given(historyTo('active'))
      .when(pause)
      .then([
        {
          type: 'GoalPaused',
          data: {
            goalId: 1,
            from: 'active',
            reason: 'budget',
            dimension: 'cents',
            spent: 85,
            requested: 40,
            budget: 100,
            notice: notice(
              1,
              `Goal "${TITLE}": active → paused — budget exhausted: 85 + 40 ¢ requested > 100 (refused work of worker)`,
              { event: 'GoalPaused', from: 'active', to: 'paused', dimension: 'cents', actor: 'worker' },
            ),
          },
        },
      ]);
    for (const status of ['draft', 'paused', 'stuck', 'completed', 'cancelled'] as const)
      spec(goalDecider).given(historyTo(status)).when(pause).thenNothingHappened();
  });
});

describe('goal decider: who may', () => {
  const coordinator = { key: 'agent-2', name: 'coordinator' };
  const worker = { key: 'agent-3', name: 'worker' };
  const stranger = { key: 'user-2', name: 'stranger' };
  const auto = (): GoalCreated['data'] => ({ ...created().data, approvalMode: 'auto' });

  it('only the owner creates a goal in auto mode (ErrApprovalModeForbidden); anyone creates one in human mode', () => {
    spec(goalDecider)
      .given([])
      .when({ type: 'CreateGoal', goal: auto(), by: owner })
      .then([{ ...created(), data: auto() }]);
    for (const by of [coordinator, worker]) {
      const e = spec(goalDecider)
        .given([])
        .when({ type: 'CreateGoal', goal: auto(), by })
        .thenThrows('ErrApprovalModeForbidden', 'approval_mode "auto" is the owner\'s choice');
      assert.deepEqual(e.details, { approval_mode: 'auto' });
      spec(goalDecider).given([]).when({ type: 'CreateGoal', goal: created().data, by }).then([created()]);
    }
  });

  it("the owner or the goal's coordinator closes it; anyone else is ErrForbidden", () => {
    spec(goalDecider)
      .given(historyTo('active'))
      .when({ type: 'CloseGoal', to: 'stuck', summary: 'done', by: coordinator })
      .then([
        {
          type: 'GoalClosed',
          data: {
            ...(closed('active', 'stuck').data as GoalClosedData),
            by: 'coordinator',
            notice: notice(1, `Goal "${TITLE}": active → stuck by coordinator: done`, {
              event: 'GoalClosed',
              from: 'active',
              to: 'stuck',
              actor: 'coordinator',
            }),
          },
        },
      ]);
    for (const by of [worker, stranger, { key: 'system', name: 'system' }]) {
      const e = spec(goalDecider)
        .given(historyTo('active'))
        .when({ type: 'CloseGoal', to: 'completed', summary: 'done', by })
        .thenThrows('ErrForbidden', "only the goal's owner or its coordinator may complete goal 1");
      assert.deepEqual(e.details, { goal_id: 1 });
    }
  });

  it('who may close is checked before the transition', () => {
    spec(goalDecider)
      .given(historyTo('completed'))
      .when({ type: 'CloseGoal', to: 'completed', summary: 'again', by: worker })
      .thenThrows('ErrForbidden');
  });

  it('only the owner switches the approval mode (ErrApprovalModeForbidden, before anything else)', () => {
    spec(goalDecider)
      .given(historyTo('active'))
      .when({ type: 'SetApprovalMode', to: 'auto', by: owner })
      .then([
        {
          type: 'GoalApprovalModeSet',
          data: {
            goalId: 1,
            from: 'human',
            to: 'auto',
            by: 'owner',
            notice: notice(
              1,
              `Goal "${TITLE}": approvals are now automatic (proposals using only registered commands are approved at once) — set by owner`,
              { event: 'GoalApprovalModeSet', from: 'human', to: 'auto', actor: 'owner' },
            ),
          },
        },
      ]);
    for (const by of [coordinator, stranger]) {
      for (const to of ['auto', 'human'] as const) {
        spec(goalDecider)
          .given(historyTo('active'))
          .when({ type: 'SetApprovalMode', to, by })
          .thenThrows('ErrApprovalModeForbidden', "only the goal's owner sets its approval mode");
      }
    }
  });

  it('only the owner resumes a goal (ErrForbidden, before the transition)', () => {
    for (const by of [coordinator, stranger]) {
      spec(goalDecider)
        .given(historyTo('stuck'))
        .when({ type: 'ResumeGoal', budgets: {}, spent: { tokens: 0, cents: 10 }, by })
        .thenThrows('ErrForbidden', "only the goal's owner may resume it");
      spec(goalDecider)
        .given(historyTo('completed'))
        .when({ type: 'ResumeGoal', budgets: {}, spent: { tokens: 0, cents: 0 }, by })
        .thenThrows('ErrForbidden');
    }
  });
});

describe('goal decider: spend against the budget', () => {
  it('nothing under 80 %', () => {
    spec(goalDecider).given(historyTo('active')).when(spend(79)).thenNothingHappened();
    spec(goalDecider).given(historyTo('active')).when(spend(0)).thenNothingHappened();
  });

  it('the soft alert at 80 % exactly, once', () => {
    spec(goalDecider)
      .given(historyTo('active'))
      .when(spend(80))
      .then([alert('cents', 80, 100)]);
    spec(goalDecider)
      .given(historyTo('active'))
      .when(spend(85))
      .then([alert('cents', 85, 100)]);
    const alerted = [...historyTo('active'), alert('cents', 85, 100)];
    spec(goalDecider).given(alerted).when(spend(85)).thenNothingHappened();
    spec(goalDecider).given(alerted).when(spend(99)).thenNothingHappened();
  });

  it('the pause at 100 %, without a second alert', () => {
    const alerted = [...historyTo('active'), alert('cents', 85, 100)];
    spec(goalDecider)
      .given(alerted)
      .when(spend(100))
      .then([pausedBySpend('cents', 100, 100)]);
    spec(goalDecider)
      .given(alerted)
      .when(spend(130))
      .then([pausedBySpend('cents', 130, 100)]);
    assert.equal(stateAfter([...alerted, pausedBySpend('cents', 100, 100)]).status, 'paused');
  });

  it('jumping from 0 to 100 % raises both, alert first', () => {
    spec(goalDecider)
      .given(historyTo('active'))
      .when(spend(100))
      .then([alert('cents', 100, 100, 1), pausedBySpend('cents', 100, 100, 2)]);
  });

  it('a paused goal does not pause again; a goal that is not active only gets the alert', () => {
    spec(goalDecider)
      .given([...historyTo('active'), alert('cents', 100, 100), pausedBySpend('cents', 100, 100)])
      .when(spend(150))
      .thenNothingHappened();
    spec(goalDecider)
      .given(historyTo('draft'))
      .when(spend(120))
      .then([alert('cents', 120, 100)]);
    spec(goalDecider)
      .given(historyTo('stuck'))
      .when(spend(120))
      .then([alert('cents', 120, 100)]);
  });

  it('nothing at all without a budget (null or 0)', () => {
    spec(goalDecider)
      .given([created({ tokens: null, cents: null }), activated])
      .when(spend(1_000_000, 1_000_000))
      .thenNothingHappened();
    spec(goalDecider)
      .given([created({ tokens: 0, cents: 0 }), activated])
      .when(spend(1_000_000, 1_000_000))
      .thenNothingHappened();
  });

  it('each dimension has its own alert; one pause even when both are exhausted', () => {
    const both = [created({ tokens: 1000, cents: 100 }), activated];
    spec(goalDecider)
      .given(both)
      .when(spend(10, 900))
      .then([alert('tokens', 900, 1000)]);
    spec(goalDecider)
      .given([...both, alert('tokens', 900, 1000)])
      .when(spend(90, 950))
      .then([alert('cents', 90, 100)]);
    spec(goalDecider)
      .given(both)
      .when(spend(100, 1000))
      .then([alert('tokens', 1000, 1000, 1), pausedBySpend('tokens', 1000, 1000, 2), alert('cents', 100, 100, 3)]);
  });
});

describe('goal decider: resume and the re-arm rule', () => {
  const exhausted = [...historyTo('active'), alert('cents', 100, 100), pausedBySpend('cents', 100, 100)];

  it('refuses while spend is at or over the (new) budget', () => {
    spec(goalDecider)
      .given(exhausted)
      .when(resume({}, { tokens: 0, cents: 100 }))
      .thenThrows('ErrGoalBudgetExceeded', 'raise it to resume');
    spec(goalDecider)
      .given(exhausted)
      .when(resume({ cents: 100 }, { tokens: 0, cents: 100 }))
      .thenThrows('ErrGoalBudgetExceeded');
    spec(goalDecider)
      .given(exhausted)
      .when(resume({ cents: 90 }, { tokens: 0, cents: 100 }))
      .thenThrows('ErrGoalBudgetExceeded');
    const tokens = [created({ tokens: 1000, cents: null }), activated, pausedBySpend('tokens', 1000, 1000)];
    const e = spec(goalDecider)
      .given(tokens)
      .when(resume({ cents: 500 }, { tokens: 1000, cents: 0 }))
      .thenThrows('ErrGoalBudgetExceeded');
    assert.deepEqual(e.details, { dimension: 'tokens', spent: 1000, budget: 1000 });
  });

  it('re-arms the alert when spend is below 80 % of the new budget', () => {
    spec(goalDecider)
      .given(exhausted)
      .when(resume({ cents: 200 }, { tokens: 0, cents: 100 }))
      .then([resumed('paused', { tokens: null, cents: 200 }, { tokens: false, cents: true })]);
    const rearmed = [...exhausted, resumed('paused', { tokens: null, cents: 200 }, { tokens: false, cents: true })];
    const s = stateAfter(rearmed);
    assert.ok(s.status !== 'absent');
    assert.deepEqual(
      [s.status, s.budgets, s.alerted],
      ['active', { tokens: null, cents: 200 }, { tokens: false, cents: false }],
    );
    spec(goalDecider).given(rearmed).when(spend(159)).thenNothingHappened();
    spec(goalDecider)
      .given(rearmed)
      .when(spend(160))
      .then([alert('cents', 160, 200)]);
  });

  it('does not re-arm when spend is already at 80 % of the new budget', () => {
    spec(goalDecider)
      .given(exhausted)
      .when(resume({ cents: 125 }, { tokens: 0, cents: 100 }))
      .then([resumed('paused', { tokens: null, cents: 125 }, { tokens: false, cents: false })]);
    const kept = [...exhausted, resumed('paused', { tokens: null, cents: 125 }, { tokens: false, cents: false })];
    spec(goalDecider).given(kept).when(spend(110)).thenNothingHappened();
    spec(goalDecider)
      .given(kept)
      .when(spend(125))
      .then([pausedBySpend('cents', 125, 125)]);
  });
});

describe('task trees: planTree', () => {
  const node = (title: string, extra: Partial<TreeNode> = {}): TreeNode => ({
    title,
    description: `${title} description`,
    ...extra,
  });
  const counter = (start = 0) => {
    let n = start;
    return () => ++n;
  };

  it('TestCreateTree_AncestryAndDepth: root → {child-1 → {grandchild}, child-2}', () => {
    const tree = node('root', {
      acceptance_criteria: 'all done',
      children: [node('child-1', { children: [node('grandchild')] }), node('child-2')],
    });
    const plans = planTree(tree, counter(10));
    assert.equal(plans.length, 4);
    assert.deepEqual(
      plans.map((p) => [p.taskId, p.title, p.parentId, p.depth]),
      [
        [11, 'root', null, 0],
        [12, 'child-1', 11, 1],
        [13, 'grandchild', 12, 2],
        [14, 'child-2', 11, 1],
      ],
    );
    const [root, child1, grandchild, child2] = plans;
    assert.deepEqual(root!.ancestry, []);
    assert.deepEqual(child1!.ancestry, [{ id: 11, title: 'root', acceptance_criteria: 'all done' }]);
    assert.deepEqual(
      grandchild!.ancestry,
      [
        { id: 11, title: 'root', acceptance_criteria: 'all done' },
        { id: 12, title: 'child-1' },
      ],
      'root first, then child-1',
    );
    assert.deepEqual(child2!.ancestry, [{ id: 11, title: 'root', acceptance_criteria: 'all done' }]);
    for (const p of plans) assert.equal(p.status, 'approved');
  });

  it('fills defaults and inherits billing codes down the tree', () => {
    const tree = node('root', {
      billing_code: 'docs',
      children: [node('a', { children: [node('a1')] }), node('b', { billing_code: 'qa', children: [node('b1')] })],
    });
    const plans = planTree(tree, counter());
    assert.deepEqual(
      plans.map((p) => [p.title, p.billingCode]),
      [
        ['root', 'docs'],
        ['a', 'docs'],
        ['a1', 'docs'],
        ['b', 'qa'],
        ['b1', 'qa'],
      ],
    );
    assert.equal(planTree(node('solo'), counter())[0]!.billingCode, 'default');
    const solo = planTree(node('solo'), counter())[0]!;
    assert.deepEqual(
      [solo.verifier, solo.heartbeat, solo.budgets, solo.acceptanceCriteria],
      [{ kind: 'auto' }, null, { tokens: null, cents: null }, ''],
    );
    const configured = planTree(
      node('x', {
        verifier_config: { kind: 'peer', agent_id: 5 },
        heartbeat_config: { max_budget: 40 },
        budget_dollars_cents: 50,
      }),
      counter(),
    )[0]!;
    assert.deepEqual(
      [configured.verifier, configured.heartbeat, configured.budgets],
      [{ kind: 'peer', agent_id: 5 }, { max_budget: 40 }, { tokens: null, cents: 50 }],
    );
  });

  it('TestCreateTree_AncestryOverflow: 20 000 chars of acceptance criteria on an intermediate node overflow the grandchild', () => {
    const big = 'x'.repeat(20_000);
    const tree = node('root', {
      children: [node('child-1', { acceptance_criteria: big, children: [node('grandchild')] })],
    });
    let caught: unknown;
    try {
      planTree(tree, counter());
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof DomainError);
    assert.equal(caught.code, 'ErrAncestryOverflow');
    assert.equal(caught.details?.path, 'tree.children[0].children[0]', 'the grandchild overflows, not child-1 itself');
    assert.ok((caught.details?.bytes as number) > ANCESTRY_CAP_BYTES);
    // The intermediate node alone is fine: its own ancestry is just the root.
    assert.equal(
      planTree(node('root', { children: [node('child-1', { acceptance_criteria: big })] }), counter()).length,
      2,
    );
  });

  it('the cap is 16 KiB of serialized ancestry, inclusive', () => {
    const ancestryBytes = (ac: string) =>
      Buffer.byteLength(JSON.stringify([{ id: 1, title: 'root', acceptance_criteria: ac }]));
    const fits = 'y'.repeat(ANCESTRY_CAP_BYTES - ancestryBytes(''));
    assert.equal(ancestryBytes(fits), ANCESTRY_CAP_BYTES);
    assert.equal(planTree(node('root', { acceptance_criteria: fits, children: [node('leaf')] }), counter()).length, 2);
    assert.throws(
      () => planTree(node('root', { acceptance_criteria: `${fits}y`, children: [node('leaf')] }), counter()),
      (e: unknown) => e instanceof DomainError && e.code === 'ErrAncestryOverflow',
    );
  });
});

describe('task trees: checkTree', () => {
  const node = (title: string, extra: Partial<TreeNode> = {}): TreeNode => ({
    title,
    description: `${title} description`,
    ...extra,
  });
  const unlimited: Budgets = { tokens: null, cents: null };
  const refusal = (tree: TreeNode, left: Budgets): DomainError => {
    try {
      checkTree(tree, left);
    } catch (e) {
      assert.ok(e instanceof DomainError);
      return e;
    }
    assert.fail('checkTree should have refused');
  };

  it('counts the nodes of an acceptable tree', () => {
    assert.equal(
      checkTree(node('root', { children: [node('a', { children: [node('a1')] }), node('b')] }), unlimited),
      4,
    );
    assert.equal(checkTree(node('root'), { tokens: 0, cents: 0 }), 1, 'no budget asked, nothing to fit');
  });

  it('refuses a root budget over what the goal has left', () => {
    const e = refusal(node('root', { budget_dollars_cents: 150 }), { tokens: null, cents: 100 });
    assert.equal(e.code, 'ErrBudgetInsufficient');
    assert.deepEqual(e.details, { path: 'tree', field: 'budget_dollars_cents', requested: 150, remaining: 100 });
    assert.equal(checkTree(node('root', { budget_dollars_cents: 100 }), { tokens: null, cents: 100 }), 1);
  });

  it('siblings draw on their parent in order; a child without a budget passes through to the nearest budgeted ancestor', () => {
    const e = refusal(
      node('root', {
        budget_tokens: 100,
        children: [node('a', { budget_tokens: 60 }), node('b', { budget_tokens: 50 })],
      }),
      unlimited,
    );
    assert.deepEqual(
      [e.code, e.details?.path, e.details?.remaining],
      ['ErrBudgetInsufficient', 'tree.children[1]', 40],
    );
    const through = refusal(
      node('root', {
        budget_tokens: 100,
        children: [node('a', { children: [node('a1', { budget_tokens: 60 }), node('a2', { budget_tokens: 50 })] })],
      }),
      unlimited,
    );
    assert.deepEqual(
      [through.details?.path, through.details?.field],
      ['tree.children[0].children[1]', 'budget_tokens'],
    );
    assert.equal(
      checkTree(
        node('root', {
          budget_tokens: 100,
          children: [node('a', { budget_tokens: 60 }), node('b', { budget_tokens: 40 })],
        }),
        unlimited,
      ),
      3,
    );
  });

  it('refuses a tree whose ancestry would overflow, before any id exists', () => {
    const tree = node('root', {
      children: [node('child-1', { acceptance_criteria: 'z'.repeat(20_000), children: [node('grandchild')] })],
    });
    assert.equal(refusal(tree, unlimited).code, 'ErrAncestryOverflow');
  });
});

describe("slugify (SynapBus's slug rules)", () => {
  it('follows the reference rules', () => {
    assert.equal(slugify('Keep docs.mcpproxy.app accurate'), 'keep-docs-mcpproxy-app-accurate');
    assert.equal(slugify('  Hello   World  '), 'hello-world');
    assert.equal(slugify('a/b.c_d-e'), 'a-b-c-d-e');
    assert.equal(slugify('--Lead and trail--'), 'lead-and-trail');
    assert.equal(slugify('Fix bug #42!'), 'fix-bug-42');
    assert.equal(slugify('Ünïcode café'), 'ncode-caf', 'non-ASCII letters are dropped');
    assert.equal(slugify('!!!'), 'goal');
    assert.equal(slugify(''), 'goal');
  });

  it('caps the slug so that goal-<slug>-NN fits a 64-character channel name', () => {
    const s = slugify('abc '.repeat(30));
    assert.equal(SLUG_MAX, 56);
    assert.equal(s, 'abc-'.repeat(14).slice(0, -1), 'cut at 56, then the trailing - trimmed');
    assert.ok(`goal-${s}-99`.length <= 64);
    assert.equal(slugify('a'.repeat(300)), 'a'.repeat(SLUG_MAX));
  });
});
