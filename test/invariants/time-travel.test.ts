import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fixedClock } from '../../src/clock.js';
import { readAll } from '../../src/engine/store.js';
import { goalSnapshot } from '../../src/projections/goal-snapshot.js';
import { replayTo } from '../../src/engine/replay.js';
import { LeaseSweeper } from '../../src/runtime/leases.js';
import { colony } from '../helpers/cli.js';
import { mcpFixture, type McpFixture } from '../helpers/mcp.js';
import { productProjections } from '../../src/app.js';
import { ok } from '../helpers/calls.js';

/**
 * Time travel (`colony replay`): a multi-agent goal is played through real MCP clients —
 * creation, a task-tree proposal, the owner's approval, claims, usage (the 80 % alert and the 100 %
 * pause, then a resume), completions, a peer's rejecting verdict, a release, a lease that runs out on
 * a controlled clock and is expired by the LeaseSweeper, and the goal's completion. After each
 * committed command the live goal snapshot is recorded with the head position. Then every position
 * from just before the goal's creation to the head is replayed into memory: at each command boundary
 * the replayed snapshot must deep-equal the live one taken right after that command committed; the
 * positions inside a multi-event command must replay without error. One boundary is also checked
 * through the real CLI (`colony replay --goal ID --position N --json`, and `--at ISO`).
 */
type Body = Record<string, unknown>;
type Snapshot = ReturnType<typeof goalSnapshot>;
interface Step {
  label: string;
  position: number;
  snapshot: Snapshot;
}
interface TaskNode {
  id: number;
  title: string;
  status: string;
  children: TaskNode[];
}

const clock = fixedClock('2026-03-02T09:00:00.000Z', 1000);
let f: McpFixture;
let goalId = 0;
const steps: Step[] = [];
let start = 0;

/** Runs one command and records the live snapshot right after it committed. */
async function step(label: string, run: () => Promise<unknown> | unknown): Promise<void> {
  const before = f.app.engine.head().position;
  await run();
  const position = f.app.engine.head().position;
  assert.ok(position > before, `${label}: appended nothing`);
  steps.push({ label, position, snapshot: goalSnapshot(f.app.engine.db, goalId) });
}

const flatten = (nodes: TaskNode[]): TaskNode[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);

before(async () => {
  f = await mcpFixture({ clock });
  const lead = f.addAgent('lead');
  const alice = f.addAgent('alice');
  const bob = f.addAgent('bob');
  const carol = f.addAgent('carol');
  const owner = await f.connect(f.ownerToken);
  const [asLead, asAlice, asBob, asCarol, asWorker] = (await Promise.all(
    [lead, alice, bob, carol, f.agent].map((a) => f.connect(a.token)),
  )) as [Client, Client, Client, Client, Client];
  start = f.app.engine.head().position;
  steps.push({ label: 'before the goal', position: start, snapshot: null });

  await step('create_goal', async () => {
    const g = await ok(owner, 'create_goal', {
      title: 'Write the handbook',
      description: 'A handbook for new contributors, written by agents',
      budget_dollars_cents: 1000,
      coordinator_config: 'lead',
      approval_mode: 'human',
      // Leaves auto-verified and a rejection that fails at once: the lifecycle time travel is tested on (evidence has its own tests).
      require_evidence: false,
      max_rejections: 0,
    });
    goalId = g.goal_id as number;
  });
  let proposal: Body = {};
  await step('propose_task_tree', async () => {
    proposal = await ok(asLead, 'propose_task_tree', {
      goal_id: goalId,
      reasoning: 'Two chapters, an index, a proofread',
      tree: {
        title: 'Handbook',
        description: 'The whole handbook, assembled',
        acceptance_criteria: 'All parts done',
        billing_code: 'docs',
        children: [
          { title: 'Chapter one', description: 'Draft chapter one: getting started' },
          {
            title: 'Chapter two',
            description: 'Draft chapter two: the review process',
            verifier_config: { kind: 'peer', agent_id: carol.agentId },
          },
          { title: 'Index', description: 'Build the index of terms', billing_code: 'tooling' },
          { title: 'Proofread', description: 'Proofread both chapters' },
        ],
      },
    });
    assert.equal(proposal.status, 'pending');
  });
  await step('owner approves (react)', () =>
    ok(owner, 'react', { message_id: proposal.proposal_message_id, reaction: 'approve' }),
  );
  const tasks = flatten(steps.at(-1)!.snapshot!.tasks_tree as unknown as TaskNode[]);
  const id = (title: string) => tasks.find((t) => t.title === title)!.id;
  const [root, one, two, index, proof] = ['Handbook', 'Chapter one', 'Chapter two', 'Index', 'Proofread'].map(id) as [
    number,
    number,
    number,
    number,
    number,
  ];
  assert.equal(steps.at(-1)!.snapshot!.goal.status, 'active');

  await step('alice claims chapter one', () => ok(asAlice, 'claim_task', { task_id: one }));
  await step('bob claims chapter two', () => ok(asBob, 'claim_task', { task_id: two }));
  await step('alice posts to the goal channel', () =>
    ok(asAlice, 'send_message', { channel: 'goal-write-the-handbook', body: 'Starting chapter one' }),
  );
  await step('alice reports usage', () =>
    ok(asAlice, 'report_usage', { task_id: one, tokens: 4000, cost_cents: 500, note: 'drafting' }),
  );
  await step('bob reports usage (80 % alert)', async () => {
    await ok(asBob, 'report_usage', { task_id: two, tokens: 2500, cost_cents: 350 });
    assert.equal(
      (goalSnapshot(f.app.engine.db, goalId)!.goal.alert_80pct_posted as { dollars_cents: boolean }).dollars_cents,
      true,
    );
  });
  await step('alice completes chapter one (auto-verified)', () =>
    ok(asAlice, 'complete_task', { task_id: one, summary: 'Chapter one drafted' }),
  );
  await step('bob completes chapter two', () =>
    ok(asBob, 'complete_task', { task_id: two, summary: 'Chapter two drafted' }),
  );
  await step('carol rejects chapter two', async () => {
    const v = await ok(asCarol, 'verify_task', {
      task_id: two,
      verdict: 'reject',
      reason: 'The review steps are out of order',
    });
    assert.equal(v.new_status, 'failed');
  });
  await step('worker claims the index', () => ok(asWorker, 'claim_task', { task_id: index }));
  await step('worker releases the index', () =>
    ok(asWorker, 'release_task', { task_id: index, reason: 'I lack the indexing tool' }),
  );
  await step('alice claims the index', () => ok(asAlice, 'claim_task', { task_id: index }));
  await step('the lease runs out; the sweeper expires it', () => {
    clock.advance(31 * 60_000);
    assert.deepEqual(new LeaseSweeper(f.app).sweep(), [index]);
  });
  await step('worker claims the index again', () => ok(asWorker, 'claim_task', { task_id: index }));
  await step('worker reports usage (100 %: paused)', async () => {
    const r = await ok(asWorker, 'report_usage', { task_id: index, tokens: 800, cost_cents: 200 });
    assert.equal(r.goal_status, 'paused');
  });
  await step('owner resumes with a larger budget', () =>
    ok(owner, 'resume_goal', { goal_id: goalId, new_budget_dollars_cents: 5000 }),
  );
  await step('worker completes the index', () =>
    ok(asWorker, 'complete_task', { task_id: index, summary: 'Index of 120 terms' }),
  );
  await step('bob claims the proofread', () => ok(asBob, 'claim_task', { task_id: proof }));
  await step('bob completes the proofread', () =>
    ok(asBob, 'complete_task', { task_id: proof, summary: 'Proofread, 14 fixes' }),
  );
  await step('alice claims the handbook', () => ok(asAlice, 'claim_task', { task_id: root }));
  await step('alice completes the handbook', () =>
    ok(asAlice, 'complete_task', { task_id: root, summary: 'Assembled' }),
  );
  await step('lead completes the goal', () =>
    ok(asLead, 'complete_goal', {
      goal_id: goalId,
      status: 'completed',
      summary: 'Handbook written; chapter two to be redone',
    }),
  );
  assert.equal(steps.at(-1)!.snapshot!.goal.status, 'completed');
});
after(() => f.close());

describe('time travel: replay equals the live goal at every command boundary', () => {
  it('records one command per step and nothing else in between', () => {
    const events = readAll(f.app.engine.db, { after: start, limit: 1e9 });
    const boundaries = events
      .filter((e, i) => events[i + 1]?.meta.commandId !== e.meta.commandId)
      .map((e) => e.position);
    assert.deepEqual(
      boundaries,
      steps.slice(1).map((s) => s.position),
      'each step committed exactly one command',
    );
    assert.ok(events.length > boundaries.length, 'some commands appended several events');
    // Every step changed what get_goal shows, so equality at a boundary says something about that step.
    steps
      .slice(1)
      .forEach((s, i) => assert.notDeepEqual(s.snapshot, steps[i]!.snapshot, `"${s.label}" changed the snapshot`));
    const types = new Set(events.map((e) => e.type));
    for (const t of [
      'GoalCreated',
      'TaskTreeProposed',
      'ProposalApproved',
      'TaskCreated',
      'GoalActivated',
      'TaskClaimed',
      'CostRecorded',
      'BudgetAlertRaised',
      'TaskCompleted',
      'TaskVerified',
      'TaskReleased',
      'ClaimExpired',
      'GoalPaused',
      'GoalResumed',
      'GoalClosed',
      'MessagePosted',
    ]) {
      assert.ok(types.has(t), `the scenario has a ${t}`);
    }
  });

  it(
    'replays every position from before the goal to the head; boundaries equal the live snapshots',
    { timeout: 120_000 },
    (t) => {
      const head = f.app.engine.head().position;
      assert.equal(head, steps.at(-1)!.position);
      const live = new Map(steps.map((s) => [s.position, s]));
      let compared = 0;
      for (let n = start; n <= head; n++) {
        const mem = replayTo(f.app.engine.db, n, productProjections);
        try {
          const snapshot = goalSnapshot(mem.db, goalId);
          const step = live.get(n);
          if (step) {
            assert.deepEqual(snapshot, step.snapshot, `position ${n}, right after "${step.label}"`);
            compared += 1;
          }
        } finally {
          mem.close();
        }
      }
      assert.equal(compared, steps.length);
      t.diagnostic(`${head - start + 1} positions replayed, ${compared} compared with live snapshots`);
    },
  );

  it('colony replay --position and --at print the live snapshot of that moment', () => {
    const middle = steps.find((s) => s.label === 'the lease runs out; the sweeper expires it')!;
    const expected = JSON.parse(JSON.stringify({ position: middle.position, ...middle.snapshot }));
    const byPosition = colony([
      'replay',
      '--data',
      f.dataDir,
      '--goal',
      String(goalId),
      '--position',
      String(middle.position),
      '--json',
    ]);
    assert.equal(byPosition.code, 0, byPosition.stderr);
    assert.deepEqual(JSON.parse(byPosition.stdout), expected);

    const at = readAll(f.app.engine.db, { after: middle.position - 1, to: middle.position })[0]!.recordedAt;
    const byTime = colony(['replay', '--data', f.dataDir, '--goal', String(goalId), '--at', at, '--json']);
    assert.equal(byTime.code, 0, byTime.stderr);
    assert.deepEqual(JSON.parse(byTime.stdout), expected, `--at ${at}`);
  });
});
