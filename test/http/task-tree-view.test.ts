import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createGoal } from '../../src/actions/goals.js';
import { decideProposal, proposeTaskTree } from '../../src/actions/proposals.js';
import { claimTask } from '../../src/actions/tasks.js';
import type { TreeRequest } from '../../src/events/proposals.js';
import { TREE_ROWS } from '../../src/http/task-tree-view.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { Browser, leaf, OWNER, ownerSpeaker, agentSpeaker, type Body } from './console-client.js';

/**
 * `?view=tree` (the console's tree): a page fetches only the rows it shows. Whole levels unfold while
 * they fit in TREE_ROWS rows, a folded task comes with its child count and its subtree's rollup, the
 * reader's unfolds (`open`) and folds (`closed`) are honoured, and time travel folds the same way.
 */
let f: HttpFixture;
let owner: Browser;
let big: number;
let small: number;
let sections: number[];
let root: number;
let afterTree: number;

const rows = (nodes: Body[]): number => nodes.reduce((n, t) => n + 1 + rows(t.children), 0);
const find = (nodes: Body[], id: number): Body | undefined => {
  for (const n of nodes) {
    if (n.id === id) return n;
    const inner = find(n.children, id);
    if (inner) return inner;
  }
  return undefined;
};

before(async () => {
  f = await httpFixture();
  owner = new Browser(f);
  await owner.signIn(f.ownerToken);
  const goal = (title: string) =>
    createGoal(
      f.app,
      ownerSpeaker(),
      {
        title,
        description: `${title}.`,
        budgets: { tokens: null, cents: null },
        maxSpawnDepth: 2,
        coordinatorConfig: 'default',
        approvalMode: 'human',
      },
      OWNER,
    ).goalId;
  const approve = (goalId: number, tree: TreeRequest) => {
    const { proposalId } = proposeTaskTree(f.app, ownerSpeaker(), goalId, 'The plan.', tree, OWNER);
    return decideProposal(f.app, ownerSpeaker(), proposalId, 'approve', '', OWNER).taskIds;
  };
  big = goal('A big goal');
  // 1 + 12 + 12 × 20 = 253 tasks: the root and its 12 sections fit, the 240 leaves do not.
  const ids = approve(big, {
    ...leaf('Everything'),
    children: Array.from({ length: 12 }, (_, s) => ({
      ...leaf(`Section ${s}`),
      children: Array.from({ length: 20 }, (_, i) => leaf(`Page ${s}.${i}`)),
    })),
  } as TreeRequest);
  root = ids[0]!;
  afterTree = f.app.engine.head().position;
  sections = ids.slice(1).filter((_, i) => i % 21 === 0); // depth first: each section, then its 20 pages
  claimTask(f.app, agentSpeaker(f.agentId, 'worker'), ids.at(-1)!, { actor: 'agent:worker' });
  small = goal('A small goal');
  approve(small, {
    ...leaf('Small'),
    children: [leaf('One'), { ...leaf('Two'), children: [leaf('Two a'), leaf('Two b')] }],
  } as TreeRequest);
});
after(() => f.close());

describe('the console tree view', () => {
  it('sends a small tree whole', async () => {
    const s = await owner.json(`/goals/${small}?view=tree`);
    assert.deepEqual([s.tree_rows, rows(s.tasks_tree), s.goal.task_count], [5, 5, 5]);
    assert.equal(s.tasks_tree[0].children[1].children.length, 2);
    assert.ok(
      !('description' in s.tasks_tree[0]) && !('acceptance_criteria' in s.tasks_tree[0]),
      'only what the tree shows',
    );
  });

  it('unfolds whole levels while they fit, then folds: children [] with child_count, rollups of the whole subtree', async () => {
    assert.equal(TREE_ROWS, 200);
    const s = await owner.json(`/goals/${big}?view=tree`);
    assert.deepEqual([s.goal.task_count, s.tree_rows, rows(s.tasks_tree)], [253, 13, 13]);
    const [top] = s.tasks_tree;
    assert.deepEqual([top.id, top.child_count, top.children.length, top.rollup.task_count], [root, 12, 12, 253]);
    for (const section of top.children)
      assert.deepEqual([section.child_count, section.children.length, section.rollup.task_count], [20, 0, 21]);
    // The claimed leaf is folded away, but its section's rollup still counts it.
    const full = await owner.json(`/goals/${big}`);
    assert.equal(rows(full.tasks_tree), 253);
    assert.ok(JSON.stringify(s).length * 5 < JSON.stringify(full).length);
  });

  it('honours the reader: open unfolds a section, closed folds the root, both survive time travel', async () => {
    const opened = await owner.json(`/goals/${big}?view=tree&open=${sections[3]},${sections[7]}`);
    assert.equal(opened.tree_rows, 13 + 40);
    assert.deepEqual(
      [
        find(opened.tasks_tree, sections[3]!)!.children.length,
        find(opened.tasks_tree, sections[7]!)!.children.length,
        find(opened.tasks_tree, sections[0]!)!.children.length,
      ],
      [20, 20, 0],
    );
    assert.deepEqual(
      [find(opened.tasks_tree, sections[3]!)!.title, find(opened.tasks_tree, sections[3]!)!.children[0].title],
      ['Section 3', 'Page 3.0'],
    );
    const closed = await owner.json(`/goals/${big}?view=tree&closed=${root}&open=${sections[3]}`);
    assert.deepEqual(
      [closed.tree_rows, closed.tasks_tree[0].children.length, closed.tasks_tree[0].child_count],
      [1, 0, 12],
    );

    const past = await owner.json(`/goals/${big}/replay?position=${afterTree}&view=tree&open=${sections[7]}`);
    assert.equal(past.tree_rows, 13 + 20);
    assert.ok(
      find(past.tasks_tree, sections[7]!)!.children.every((t: Body) => t.status === 'approved'),
      'as it was: nothing claimed yet',
    );
    const now = await owner.json(`/goals/${big}?view=tree&open=${sections[11]}`);
    assert.equal(find(now.tasks_tree, sections[11]!)!.children.at(-1).status, 'claimed');
  });

  it('refuses a malformed id list, naming the parameter', async () => {
    for (const bad of ['open=abc', 'closed=1,,2', 'open=1;2', `open=${'1,'.repeat(6000)}1`]) {
      const body = await owner.error(`/goals/${big}?view=tree&${bad}`, {}, 400, 'ErrInvalidInput');
      assert.match(body.error.message, /^query\.(open|closed): /, bad);
    }
  });
});
