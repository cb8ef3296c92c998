import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createGoal } from '../../src/actions/goals.js';
import { decideProposal, proposeTaskTree } from '../../src/actions/proposals.js';
import { openApp } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { colony, colonyFails, colonyOk, logHead, oneLine, stdioClient } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { ok } from '../helpers/calls.js';

/**
 * `colony goals list|show`, `colony approve|reject` and `colony replay` as separate processes on real
 * data dirs. Goals and proposals come from a real MCP client over `colony stdio` on the same data dir
 * (and, for replay, from the app's actions under a fixed clock, so `--at` has known moments).
 */
type Body = Record<string, unknown>;
const scratch = tempDir('colony-cli-goals-');
after(() => scratch.cleanup());

const DESCRIPTION = 'Keep every page of the documentation site accurate against the code.';
const leaf = (title: string): Body => ({ title, description: `${title}: the work to do here.` });
const TREE = {
  ...leaf('Audit the docs'),
  children: [
    { ...leaf('Audit the install guide'), children: [leaf('Run the install steps')] },
    leaf('Audit the API reference'),
  ],
};

const json = (dir: string, args: string[]): unknown => JSON.parse(colonyOk([...args, '--data', dir, '--json']));

describe('goals, approve and reject through the CLI', () => {
  let dir: string;
  let client: Client;
  let draftId: number;
  let goalId: number;
  let approveId: number;
  let approveMessage: number;

  before(async () => {
    dir = join(scratch.dir, 'goals');
    const init = colony(['init', '--data', dir, '--json']);
    assert.equal(init.code, 0, init.stderr);
    client = await stdioClient(dir, JSON.parse(init.stdout).token);
  });
  after(async () => {
    await client.close();
  });

  it('lists no goals on a fresh data dir', () => {
    const r = colony(['goals', 'list', '--data', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'No goals\n');
    assert.deepEqual(json(dir, ['goals', 'list']), []);
  });

  it('lists and shows goals made over MCP', async () => {
    draftId = (
      await ok(client, 'create_goal', {
        title: 'Keep docs.mcpproxy.app accurate',
        description: DESCRIPTION,
        budget_tokens: 9000,
      })
    ).goal_id as number;
    goalId = (await ok(client, 'create_goal', { title: 'Ship the release notes', description: DESCRIPTION }))
      .goal_id as number;
    const p = await ok(client, 'propose_task_tree', { goal_id: goalId, reasoning: 'Two sections.', tree: TREE });
    approveId = p.proposal_id as number;
    approveMessage = p.proposal_message_id as number;

    const list = json(dir, ['goals', 'list']) as Body[];
    assert.deepEqual(
      list.map((g) => [g.id, g.status, g.slug]),
      [
        [goalId, 'draft', 'ship-the-release-notes'],
        [draftId, 'draft', 'keep-docs-mcpproxy-app-accurate'],
      ],
    );
    assert.equal(list[1]!.budget_tokens, 9000);
    const text = colony(['goals', 'list', '--data', dir]);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /Keep docs\.mcpproxy\.app accurate.*#goal-keep-docs-mcpproxy-app-accurate, 0 tasks/);
    assert.deepEqual(json(dir, ['goals', 'list', '--status', 'active']), []);

    const show = json(dir, ['goals', 'show', String(goalId)]) as {
      goal: Body;
      tasks_tree: unknown[];
      spawned_agents: Body[];
      cost_breakdown: Body;
      recent_events: unknown[];
    };
    assert.deepEqual(Object.keys(show).sort(), [
      'cost_breakdown',
      'goal',
      'recent_events',
      'spawned_agents',
      'tasks_tree',
    ]);
    assert.deepEqual(
      [show.goal.id, show.goal.status, show.goal.pending_proposal_id, show.tasks_tree],
      [goalId, 'draft', approveId, []],
    );
    const shown = colony(['goals', 'show', String(goalId), '--data', dir]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /^Goal \d+ "Ship the release notes" — draft {3}#goal-ship-the-release-notes {3}coordinator coordinator$/m,
    );
    assert.match(shown.stdout, /^Tasks: none yet$/m);
  });

  it('refuses bad goal ids and statuses with one line', () => {
    colonyFails(dir, ['goals', 'show', '999'], /^colony: goal 999 not found$/);
    colonyFails(dir, ['goals', 'show', 'abc'], /goal id must be a positive integer, not "abc"/);
    colonyFails(dir, ['goals', 'show', '0'], /goal id must be a positive integer/);
    colonyFails(dir, ['goals', 'list', '--status', 'finished'], /--status must be one of draft, active/);
  });

  it('approve materializes the tree; the stdio server sees it at once', async () => {
    const r = json(dir, ['approve', String(approveId)]) as { proposal_id: number; status: string; task_ids: number[] };
    assert.deepEqual([r.proposal_id, r.status, r.task_ids.length], [approveId, 'approved', 4]);
    const snap = await ok(client, 'get_goal', { goal_id: goalId });
    assert.equal((snap.goal as Body).status, 'active');
    const tree = snap.tasks_tree as {
      id: number;
      title: string;
      status: string;
      children: { title: string; children: { title: string; ancestry: unknown[] }[] }[];
    }[];
    assert.deepEqual(
      tree.map((t) => [t.title, t.status]),
      [['Audit the docs', 'approved']],
    );
    assert.equal(tree[0]!.id, r.task_ids[0]);
    assert.deepEqual(
      tree[0]!.children[0]!.children.map((c) => [c.title, c.ancestry.length]),
      [['Run the install steps', 2]],
    );
    const approvals = (await ok(client, 'get_channel_messages', { channel_name: 'approvals' })).messages as {
      message_id: number;
      reactions: Body[];
    }[];
    assert.deepEqual(
      approvals.find((m) => m.message_id === approveMessage)!.reactions,
      [{ reaction: 'approve', by: 'owner' }],
      'the decision shows on the proposal message',
    );

    const text = colony(['goals', 'show', String(goalId), '--data', dir]);
    assert.match(text.stdout, /^ {2}#\d+ \[approved\] Audit the docs — 0 tokens, 0¢$/m);
    assert.match(text.stdout, /^ {6}#\d+ \[approved\] Run the install steps/m);
    assert.match(text.stdout, /\(new\) → approved by owner/);
    assert.deepEqual(
      (json(dir, ['goals', 'list', '--status', 'active']) as Body[]).map((g) => g.id),
      [goalId],
    );
  });

  it('a decided proposal cannot be decided again', () => {
    colonyFails(dir, ['approve', String(approveId)], /^colony: ErrProposalDecided: proposal \d+ was already approved$/);
    colonyFails(dir, ['reject', String(approveId), '--reason', 'changed my mind'], /ErrProposalDecided/);
  });

  it('reject needs a reason, tells the proposer why, and leaves no task', async () => {
    const p = await ok(client, 'propose_task_tree', { goal_id: draftId, tree: TREE });
    const id = String(p.proposal_id);
    colonyFails(dir, ['reject', id], /required option '--reason <text>' not specified/);
    colonyFails(dir, ['reject', id, '--reason', '   '], /--reason must not be empty/);
    const r = colony(['reject', id, '--reason', 'Split the API reference per endpoint', '--data', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Rejected proposal ${id}; the proposer was told why\n`);
    const inbox = (await ok(client, 'read_inbox')).messages as { from: string; body: string }[];
    assert.ok(
      inbox.some((m) => m.from === 'system' && m.body.includes('Split the API reference per endpoint')),
      JSON.stringify(inbox),
    );
    const snap = await ok(client, 'get_goal', { goal_id: draftId });
    assert.deepEqual(
      [(snap.goal as Body).status, (snap.goal as Body).pending_proposal_id, snap.tasks_tree],
      ['draft', null, []],
    );
    const again = await ok(client, 'propose_task_tree', { goal_id: draftId, tree: leaf('A smaller plan') });
    const approved = colony(['approve', String(again.proposal_id), '--data', dir]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /^Approved proposal \d+: created tasks \d+\n$/);
  });

  it('refuses proposal ids that are malformed or do not exist', () => {
    colonyFails(dir, ['approve', '9999'], /^colony: ErrProposalNotFound: proposal 9999 not found$/);
    colonyFails(dir, ['reject', '9999', '--reason', 'no'], /ErrProposalNotFound/);
    for (const bad of ['abc', '0', '1.5', '-1'])
      colonyFails(dir, ['approve', bad], /proposal id must be a positive integer|unknown option/);
  });

  it('gives each command its --help', () => {
    for (const cmd of [['goals', 'list'], ['goals', 'show'], ['approve'], ['reject'], ['replay']]) {
      const r = colony([...cmd, '--help']);
      assert.equal(r.code, 0, cmd.join(' '));
      assert.match(r.stdout, /Usage: colony/);
    }
  });
});

describe('colony replay', () => {
  let dir: string;
  let goalId: number;
  let beforeApproval: number;
  let afterApproval: number;

  before(() => {
    dir = join(scratch.dir, 'replay');
    assert.equal(colony(['init', '--data', dir]).code, 0);
    // Moments far in the future, so they follow `init`'s real-time events: created 00:00, approved 01:00.
    const clock = fixedClock('2099-01-01T00:00:00.000Z', 10);
    const app = openApp({ dataDir: dir, clock });
    try {
      const by = { key: 'user-1', name: 'owner', tenant: 1 };
      const actor = { actor: 'user:owner' };
      goalId = createGoal(
        app,
        by,
        {
          title: 'Replay me',
          description: DESCRIPTION,
          budgets: { tokens: null, cents: null },
          maxSpawnDepth: 3,
          coordinatorConfig: 'default',
          approvalMode: 'human',
        },
        actor,
      ).goalId;
      const p = proposeTaskTree(app, by, goalId, 'Because.', TREE as never, actor);
      beforeApproval = app.engine.head().position;
      clock.advance(3_600_000);
      decideProposal(app, by, p.proposalId, 'approve', '', actor);
      afterApproval = app.engine.head().position;
    } finally {
      app.engine.close();
    }
  });

  type Snap = {
    position: number;
    goal: Body;
    tasks_tree: { title: string; children: unknown[] }[];
    recent_events: unknown[];
  };

  it('--position N prints the goal as it was: before approval no tasks, after it the tree', () => {
    const early = json(dir, ['replay', '--goal', String(goalId), '--position', String(beforeApproval)]) as Snap;
    assert.equal(early.position, beforeApproval);
    assert.deepEqual([early.goal.status, early.goal.task_count, early.tasks_tree], ['draft', 0, []]);
    assert.ok(early.goal.pending_proposal_id, 'the proposal is pending then');
    const late = json(dir, ['replay', '--goal', String(goalId), '--position', String(afterApproval)]) as Snap;
    assert.deepEqual([late.goal.status, late.goal.task_count, late.goal.pending_proposal_id], ['active', 4, null]);
    assert.deepEqual(
      late.tasks_tree.map((t) => [t.title, t.children.length]),
      [['Audit the docs', 2]],
    );
  });

  it('--at ISO picks the last event at or before that moment', () => {
    const early = json(dir, ['replay', '--goal', String(goalId), '--at', '2099-01-01T00:30:00Z']) as Snap;
    assert.deepEqual([early.position, early.goal.status, early.tasks_tree], [beforeApproval, 'draft', []]);
    const late = json(dir, ['replay', '--goal', String(goalId), '--at', '2099-01-01T02:00:00.000Z']) as Snap;
    assert.deepEqual([late.position, late.goal.status, late.tasks_tree.length], [afterApproval, 'active', 1]);
  });

  it('the replay of the head equals the live snapshot, and replay writes nothing', () => {
    const events = logHead(dir);
    const { position, ...replayed } = json(dir, [
      'replay',
      '--goal',
      String(goalId),
      '--position',
      String(afterApproval),
    ]) as Snap;
    assert.equal(position, afterApproval);
    assert.deepEqual(replayed, json(dir, ['goals', 'show', String(goalId)]));
    assert.equal(logHead(dir), events);
  });

  it('prints a readable snapshot', () => {
    const early = colony(['replay', '--goal', String(goalId), '--position', String(beforeApproval), '--data', dir]);
    assert.equal(early.code, 0, early.stderr);
    assert.match(early.stdout, new RegExp(`^\\(as of log position ${beforeApproval}\\)$`, 'm'));
    assert.match(early.stdout, /^Goal \d+ "Replay me" — draft/m);
    assert.match(early.stdout, /^Tasks: none yet$/m);
    const late = colony(['replay', '--goal', String(goalId), '--at', '2099-01-01T02:00:00Z', '--data', dir]);
    assert.match(late.stdout, /^Goal \d+ "Replay me" — active/m);
    assert.match(late.stdout, /^ {4}#\d+ \[approved\] Audit the install guide/m);
  });

  it('refuses both or neither of --at and --position, and other bad arguments, with one line', () => {
    const g = String(goalId);
    colonyFails(dir, ['replay', '--goal', g], /give exactly one of --at ISO or --position N/);
    colonyFails(
      dir,
      ['replay', '--goal', g, '--at', '2099-01-01T00:30:00Z', '--position', '3'],
      /give exactly one of --at ISO or --position N/,
    );
    colonyFails(dir, ['replay', '--goal', g, '--at', 'yesterday'], /--at must be an ISO-8601 time, not "yesterday"/);
    colonyFails(dir, ['replay', '--goal', g, '--position', 'ten'], /--position must be a non-negative integer/);
    colonyFails(
      dir,
      ['replay', '--goal', g, '--position', String(afterApproval + 1)],
      new RegExp(`past the head of the log \\(${afterApproval}\\)`),
    );
    colonyFails(dir, ['replay', '--goal', g, '--position', '2'], new RegExp(`goal ${g} does not exist at position 2`));
    colonyFails(dir, ['replay', '--goal', g, '--at', '2000-01-01T00:00:00Z'], /does not exist at position 0/);
    colonyFails(dir, ['replay', '--goal', '999', '--position', String(afterApproval)], /goal 999 does not exist/);
    colonyFails(dir, ['replay', '--goal', 'abc', '--position', '1'], /--goal must be a positive integer/);
    colonyFails(dir, ['replay', '--position', '1'], /required option '--goal <id>' not specified/);
  });

  it('refuses a data dir that was never initialized', () => {
    const r = colony(['replay', '--goal', '1', '--position', '1', '--data', join(scratch.dir, 'missing')]);
    assert.equal(r.code, 1);
    oneLine(r.stderr);
    assert.match(r.stderr, /no Colony data in/);
  });
});
