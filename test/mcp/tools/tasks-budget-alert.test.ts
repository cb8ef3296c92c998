import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { finishRun, requestRun, startQueuedRun } from '../../../src/actions/runs.js';
import { taskDecider } from '../../../src/commands/tasks.js';
import type { Notice } from '../../../src/events/notices.js';
import { readAll } from '../../../src/engine/store.js';
import type { TaskBudgetAlertRaised, TaskCreated } from '../../../src/events/tasks.js';
import { ok } from '../../helpers/calls.js';
import { spec } from '../../helpers/decider-spec.js';
import { mcpFixture, type McpFixture } from '../../helpers/mcp.js';

/**
 * A task budget gets the goal budget's 80 % soft alert: when the spend of a
 * budgeted task's subtree reaches 80 % of its token or cents budget, one system message in the goal
 * channel, once per dimension, in the command that recorded the spend (report_usage or a run's usage).
 * A task budget never pauses the goal: that is the goal budget's job.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
type Body = Record<string, unknown>;
type Msg = { body: string; from: string; kind: string; metadata: Body | null };

const notice = (messageId: number, body: string, metadata: Body): Notice => ({
  messageId,
  channelId: 3,
  body,
  metadata: { kind: 'system', goal_id: 1, task_id: 7, ...metadata },
});
const created = (budgets: TaskCreated['data']['budgets']): TaskCreated => ({
  type: 'TaskCreated',
  data: {
    taskId: 7,
    goalId: 1,
    parentId: null,
    depth: 0,
    ancestry: [],
    title: 'Scan docs',
    description: 'Scan every page',
    acceptanceCriteria: '',
    billingCode: 'docs',
    budgets,
    verifier: { kind: 'auto' },
    heartbeat: null,
    status: 'approved',
    proposalId: 2,
    channelId: 3,
    by: { key: 'user-1', name: 'owner' },
    notice: notice(1, 'Task #7 "Scan docs": (new) → approved by owner', {
      event: 'TaskCreated',
      from: null,
      to: 'approved',
      actor: 'owner',
    }),
  },
});
const alert = (dimension: 'tokens' | 'cents', spent: number, budget: number, messageId = 1): TaskBudgetAlertRaised => {
  const percent = Math.floor((spent / budget) * 100);
  return {
    type: 'TaskBudgetAlertRaised',
    data: {
      taskId: 7,
      goalId: 1,
      dimension,
      spent,
      budget,
      percent,
      notice: notice(
        messageId,
        `⚠️ Budget soft alert: task #7 "Scan docs" has used ${percent}% of its ${dimension} budget (${spent} of ${budget} ${dimension === 'tokens' ? 'tokens' : '¢'})`,
        { event: 'TaskBudgetAlertRaised', dimension, spent, budget, percent },
      ),
    },
  };
};
const spend = (tokens: number, cents: number) => ({ type: 'ApplyTaskSpend' as const, spent: { tokens, cents } });

describe('the task decider: one 80 % alert per budget dimension', () => {
  it('below 80 % nothing; at 80 % one alert per dimension; never again; no budget, no alert', () => {
    const both = created({ tokens: 1000, cents: 100 });
    spec(taskDecider).given([both]).when(spend(799, 79)).thenNothingHappened();
    spec(taskDecider)
      .given([both])
      .when(spend(800, 10))
      .then([alert('tokens', 800, 1000)]);
    spec(taskDecider)
      .given([both])
      .when(spend(2000, 95))
      .then([alert('tokens', 2000, 1000), alert('cents', 95, 100, 2)]);
    spec(taskDecider)
      .given([both, alert('tokens', 800, 1000)])
      .when(spend(900, 10))
      .thenNothingHappened();
    spec(taskDecider)
      .given([both, alert('tokens', 800, 1000)])
      .when(spend(900, 80))
      .then([alert('cents', 80, 100)]);
    spec(taskDecider)
      .given([created({ tokens: null, cents: 0 })])
      .when(spend(1e9, 1e9))
      .thenNothingHappened();
    spec(taskDecider).given([]).when(spend(1, 1)).thenThrows('ErrTaskNotFound');
  });
});

interface World {
  f: McpFixture;
  owner: Client;
  worker: Client;
  goalId: number;
  channelId: number;
  ids: number[];
}

/** A goal (1000¢, 100 000 tokens) with the tree `tree`; ids depth-first. */
async function world(t: TestContext, tree: Body): Promise<World> {
  const f = await mcpFixture({ agent: { command: 'true' } });
  t.after(() => f.close());
  const owner = await f.connect(f.ownerToken);
  const g = await ok(owner, 'create_goal', {
    title: 'Docs refresh',
    description: 'Keep the docs accurate.',
    budget_dollars_cents: 1000,
    budget_tokens: 100_000,
  });
  const p = await ok(owner, 'propose_task_tree', { goal_id: g.goal_id, tree });
  await ok(owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' });
  type N = { id: number; children: N[] };
  const flat = (ns: N[]): number[] => ns.flatMap((n) => [n.id, ...flat(n.children)]);
  const ids = flat((await ok(owner, 'get_goal', { goal_id: g.goal_id })).tasks_tree as N[]);
  return {
    f,
    owner,
    worker: await f.connect(f.agentToken),
    goalId: g.goal_id as number,
    channelId: g.channel_id as number,
    ids,
  };
}
const node = (title: string, extra: Body = {}, children?: Body[]): Body => ({
  title,
  description: `${title}: do it carefully`,
  ...extra,
  ...(children ? { children } : {}),
});
const usage = (w: World, taskId: number, tokens: number, cents: number) =>
  ok(w.owner, 'report_usage', { task_id: taskId, tokens, cost_cents: cents });
async function alerts(w: World, event = 'TaskBudgetAlertRaised'): Promise<Msg[]> {
  const messages = (await ok(w.worker, 'get_channel_messages', { channel_id: w.channelId, limit: 200 }))
    .messages as Msg[];
  return messages.filter((m) => m.metadata?.event === event);
}

describe("a task budget's soft alert in the goal channel", () => {
  it("the subtree's spend crossing 80 % of a task's cents budget posts one alert; the goal is neither alerted nor paused", async (t) => {
    const w = await world(
      t,
      node('Budgeted root', { budget_dollars_cents: 100 }, [node('First leaf'), node('Second leaf')]),
    );
    const [root, first, second] = w.ids as [number, number, number];
    await usage(w, first, 0, 50);
    assert.equal((await alerts(w)).length, 0, 'no alert at 50 %');
    await usage(w, second, 0, 30);
    const [only, ...more] = await alerts(w);
    assert.equal(more.length, 0);
    assert.deepEqual([only!.from, only!.kind], ['system', 'system']);
    assert.equal(
      only!.body,
      `⚠️ Budget soft alert: task #${root} "Budgeted root" has used 80% of its cents budget (80 of 100 ¢)`,
    );
    assert.deepEqual(only!.metadata, {
      kind: 'system',
      goal_id: w.goalId,
      task_id: root,
      event: 'TaskBudgetAlertRaised',
      dimension: 'cents',
      spent: 80,
      budget: 100,
      percent: 80,
    });
    const out = await usage(w, first, 0, 70);
    assert.equal(out.goal_status, 'active', 'a task budget does not pause the goal');
    assert.equal((await alerts(w)).length, 1, 'exactly one alert, however much more is spent');
    assert.equal((await alerts(w, 'BudgetAlertRaised')).length, 0, "150 of the goal's 1000¢ raises no goal alert");
  });

  it('a token budget alerts the same way; one report may alert a leaf and its budgeted ancestor, in that command', async (t) => {
    const w = await world(t, node('Parent', { budget_tokens: 2000 }, [node('Hungry leaf', { budget_tokens: 1000 })]));
    const [parent, leaf] = w.ids as [number, number];
    await usage(w, leaf, 799, 0);
    assert.equal((await alerts(w)).length, 0);
    const head = w.f.app.engine.head().position;
    await usage(w, leaf, 801, 0);
    const raised = readAll(w.f.app.engine.db, { after: head }).filter((e) => e.type === 'TaskBudgetAlertRaised');
    assert.deepEqual(
      raised.map((e) => [(e.data as Body).taskId, (e.data as Body).percent]),
      [
        [leaf, 160],
        [parent, 80],
      ],
    );
    assert.equal(
      new Set(readAll(w.f.app.engine.db, { after: head }).map((e) => e.meta.commandId)).size,
      1,
      'recorded with the spend, in one command',
    );
    const bodies = (await alerts(w)).map((m) => m.body);
    assert.deepEqual(bodies, [
      `⚠️ Budget soft alert: task #${leaf} "Hungry leaf" has used 160% of its tokens budget (1600 of 1000 tokens)`,
      `⚠️ Budget soft alert: task #${parent} "Parent" has used 80% of its tokens budget (1600 of 2000 tokens)`,
    ]);
  });

  it("a run's own usage raises the alert too", async (t) => {
    const w = await world(t, node('Metered task', { budget_dollars_cents: 50 }));
    const [task] = w.ids as [number];
    await ok(w.worker, 'claim_task', { task_id: task });
    const { run } = requestRun(w.f.app, {
      agentId: w.f.agent.agentId,
      source: 'task_assignment',
      taskId: task,
      by: 'system',
    });
    assert.ok(startQueuedRun(w.f.app, run.runId), 'the run started');
    finishRun(w.f.app, run.runId, {
      status: 'succeeded',
      exitCode: 0,
      signal: null,
      durationMs: 10,
      tokensIn: 5,
      tokensOut: 5,
      costCents: 45,
      outputTail: '',
      agentText: null,
    });
    const [only, ...more] = await alerts(w);
    assert.equal(more.length, 0);
    assert.match(
      only!.body,
      new RegExp(`task #${task} "Metered task" has used 90% of its cents budget \\(45 of 50 ¢\\)`),
    );
  });
});
