import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  listResources,
  PAGE_SIZE,
  readResource,
  RESOURCE_TEMPLATES,
  resourceListChangedBy,
  resourceUrisTouchedBy,
} from '../../../src/mcp/resources/index.js';
import type { RunRow } from '../../../src/projections/run-queries.js';
import { goalWithTree, world, type World } from '../../helpers/resource-world.js';
import { type Caller } from '../../../src/events/principals.js';
import { throwsCode } from '../../helpers/errors.js';

/**
 * The MCP resources data layer on a real app: templates, the paginated list, each kind read,
 * tenancy and run privacy exactly like the read tools, the tool-scope gate, malformed URIs, and which
 * URIs an event touches. Everything is made through the real tool pipeline and run actions.
 */
let w: World;
let goalId: number;
let taskIds: number[];
let otherGoal: number;
let other: Caller;
const ids = {} as Record<'runner' | 'child' | 'peer' | 'scoped', { agentId: number; token: string }>;
const runs = {} as Record<'runner' | 'child' | 'peer' | 'again', RunRow>;

const read = (caller: Caller, uri: string) => readResource(w.f.ctx, caller, uri);
const json = (caller: Caller, uri: string) => JSON.parse(read(caller, uri)[0]!.text) as Record<string, any>;

before(async () => {
  w = await world();
  ({ goalId, taskIds } = await goalWithTree(w, w.owner, 'Ship the docs'));
  ids.runner = w.agent('runner');
  ids.child = w.agent('child', { parentId: ids.runner.agentId });
  ids.peer = w.agent('peer');
  ids.scoped = w.agent('scoped', { toolScope: ['claim_task'] });
  runs.runner = w.run(ids.runner.agentId, [['agent', 'runner did its part']]);
  runs.child = w.run(ids.child.agentId, [['agent', 'child output']]);
  runs.peer = w.run(ids.peer.agentId, [['agent', "the peer's private notes"]]);
  const second = w.f.addOwner('other');
  other = w.callerOf(second.token);
  otherGoal = (await goalWithTree(w, other, 'Another team goal')).goalId;
});
after(() => w.f.close());

describe('templates and the list', () => {
  it('lists the five templates in a fixed order', () => {
    assert.deepEqual(
      RESOURCE_TEMPLATES.map((t) => t.uriTemplate),
      [
        'colony://goals/{goalId}',
        'colony://goals/{goalId}/tree',
        'colony://agents/{name}',
        'colony://runs/{runId}',
        'colony://runs/{runId}/transcript',
      ],
    );
    assert.ok(RESOURCE_TEMPLATES.every((t) => t.name && t.title && t.description && t.mimeType));
  });

  it("lists the caller's goals then its team's agents, the same way every time, never another tenant's", () => {
    const page = listResources(w.f.ctx, w.owner);
    assert.deepEqual(page, listResources(w.f.ctx, w.owner));
    assert.equal(page.nextCursor, undefined);
    const uris = page.resources.map((r) => r.uri);
    assert.equal(uris[0], `colony://goals/${goalId}`);
    assert.ok(!uris.includes(`colony://goals/${otherGoal}`));
    assert.deepEqual(
      uris.slice(1),
      ['worker', 'coordinator', 'runner', 'child', 'peer', 'scoped'].map((n) => `colony://agents/${n}`),
      'agents by id',
    );
    assert.equal(page.resources[0]!.title, 'Ship the docs');
    assert.deepEqual(
      listResources(w.f.ctx, other).resources.map((r) => r.uri),
      [`colony://goals/${otherGoal}`, 'colony://agents/coordinator'],
    );
  });

  it('pages by PAGE_SIZE with an opaque cursor, and refuses a forged one', async () => {
    const pager = w.f.addOwner('pager');
    const caller = w.callerOf(pager.token);
    for (let i = 0; i < 3; i++)
      await w.tool(caller, 'create_goal', { title: `Paged goal ${i}`, description: 'A goal to fill the pages.' });
    for (let i = 0; i < PAGE_SIZE; i++) w.f.addAgent(`bulk-${i}`, { ownerId: pager.userId });
    const first = listResources(w.f.ctx, caller);
    assert.equal(first.resources.length, PAGE_SIZE);
    assert.ok(first.nextCursor);
    const second = listResources(w.f.ctx, caller, first.nextCursor);
    assert.equal(second.nextCursor, undefined);
    const all = [...first.resources, ...second.resources].map((r) => r.uri);
    assert.equal(new Set(all).size, 3 + 1 + PAGE_SIZE, 'every goal and agent (the coordinator too) exactly once');
    assert.match(all[0]!, /goals\//);
    assert.ok(Number(all[0]!.split('/').pop()) > Number(all[1]!.split('/').pop()), 'goals newest first');
    throwsCode(() => listResources(w.f.ctx, caller, 'not-a-cursor'), 'ErrInvalidInput', /cursor/);
  });
});

describe('reading each kind', () => {
  it('a goal with its status, budget and progress, and its tree', () => {
    const g = json(w.owner, `colony://goals/${goalId}`);
    assert.equal(g.goal.id, goalId);
    assert.equal(g.goal.status, 'active');
    assert.equal(g.goal.budget_dollars_cents, 1000);
    assert.deepEqual({ count: g.progress.task_count, done: g.progress.done }, { count: 2, done: 0 });
    assert.equal(g.links.tree, `colony://goals/${goalId}/tree`);
    assert.equal(g.recent_events, undefined, 'channel messages are not part of the goal resource');
    const t = json(w.owner, `colony://goals/${goalId}/tree`);
    assert.equal(t.tasks_tree[0].title, 'Root task');
    assert.deepEqual(
      t.tasks_tree[0].children.map((c: { id: number }) => c.id),
      [taskIds[1]],
    );
    assert.equal(read(w.owner, `colony://goals/${goalId}`)[0]!.mimeType, 'application/json');
  });

  it('an agent with trust, reputation and status; its prompt and runs only for those who may see them, never a token', () => {
    const mine = json(w.owner, 'colony://agents/runner');
    assert.equal(mine.agent.name, 'runner');
    assert.equal(mine.trust.autonomy_tier, 'supervised');
    assert.ok(Math.abs(mine.reputation.rolling_score - 0.5) < 0.001, 'the bootstrap score, barely decayed');
    assert.equal(mine.status.runtime, 'idle');
    assert.equal(mine.agent.system_prompt, 'You are runner.');
    assert.deepEqual(
      mine.recent_runs.map((r: { id: number }) => r.id),
      [runs.runner.runId],
    );
    const seenByPeer = json(w.callerOf(ids.peer.token), 'colony://agents/runner');
    assert.equal(seenByPeer.agent.system_prompt, null);
    assert.equal(seenByPeer.recent_runs, null);
    assert.doesNotMatch(read(w.owner, 'colony://agents/runner')[0]!.text, new RegExp(ids.runner.token));
  });

  it("a run and its transcript (markdown, session_read's text)", () => {
    const r = json(w.owner, `colony://runs/${runs.runner.runId}`);
    assert.equal(r.run.status, 'succeeded');
    assert.equal(r.run.agent, 'runner');
    assert.equal(r.links.transcript, `colony://runs/${runs.runner.runId}/transcript`);
    const [t] = read(w.owner, `colony://runs/${runs.runner.runId}/transcript`);
    assert.equal(t!.mimeType, 'text/markdown');
    assert.match(t!.text, /^# Session: runner \(-\)/);
    assert.match(t!.text, /runner did its part/);
  });
});

describe('tenancy, privacy and scope', () => {
  it('another tenant\'s goal, agent or run is "not found", exactly like one that does not exist', () => {
    throwsCode(() => read(other, `colony://goals/${goalId}`), 'ErrNotFound', /not found/);
    throwsCode(() => read(w.owner, `colony://goals/${otherGoal}/tree`), 'ErrNotFound');
    throwsCode(() => read(w.owner, 'colony://goals/99999'), 'ErrNotFound');
    throwsCode(() => read(other, 'colony://agents/runner'), 'ErrNotFound');
    throwsCode(() => read(other, `colony://runs/${runs.runner.runId}`), 'ErrNotFound');
    const messageOf = (uri: string) => {
      try {
        read(other, uri);
      } catch (e) {
        return (e as Error).message.replace(uri, 'URI');
      }
      return 'read';
    };
    assert.equal(
      messageOf(`colony://goals/${goalId}`),
      messageOf('colony://goals/99999'),
      'no hint that it exists elsewhere',
    );
    assert.equal(
      json(w.callerOf(w.f.agentToken), `colony://goals/${goalId}`).goal.id,
      goalId,
      "an agent reads its tenant's goals",
    );
  });

  it("an agent reads its own and its spawned agents' runs, never a peer's (the session tools' rule)", () => {
    const runner = w.callerOf(ids.runner.token);
    assert.match(read(runner, `colony://runs/${runs.child.runId}/transcript`)[0]!.text, /child output/);
    throwsCode(() => read(runner, `colony://runs/${runs.peer.runId}/transcript`), 'ErrNotFound');
    throwsCode(() => read(runner, `colony://runs/${runs.peer.runId}`), 'ErrNotFound');
    throwsCode(
      () => read(w.callerOf(ids.child.token), `colony://runs/${runs.runner.runId}/transcript`),
      'ErrNotFound',
      /not found/,
    );
  });

  it('an agent without the matching read tool in its scope reads nothing and lists nothing', () => {
    const scoped = w.callerOf(ids.scoped.token);
    throwsCode(
      () => read(scoped, `colony://goals/${goalId}`),
      'ErrToolNotInScope',
      /get_goal.*colony agents update scoped --tools claim_task,get_goal/,
    );
    throwsCode(() => read(scoped, 'colony://goals/99999'), 'ErrToolNotInScope', /get_goal/);
    assert.deepEqual(listResources(w.f.ctx, scoped).resources, []);
  });

  it('malformed URIs are invalid input; unknown kinds and ids are not found', () => {
    throwsCode(() => read(w.owner, 'https://example.com/goals/1'), 'ErrInvalidInput', /colony:\/\//);
    throwsCode(() => read(w.owner, 'colony://goals/abc'), 'ErrInvalidInput', /goal id/);
    throwsCode(() => read(w.owner, 'colony://runs/0'), 'ErrInvalidInput', /run id/);
    throwsCode(() => read(w.owner, 'colony://agents/%E0%A4%A'), 'ErrInvalidInput', /percent-encoding/);
    throwsCode(() => read(w.owner, 'colony://widgets/1'), 'ErrNotFound', /colony:\/\/goals\/\{id\}/);
    throwsCode(() => read(w.owner, 'colony://goals/1/leaves'), 'ErrNotFound');
  });
});

describe('which resources an event touches', () => {
  const touched = (events: Awaited<ReturnType<World['eventsOf']>>, tenant: number) =>
    new Set(events.flatMap((e) => resourceUrisTouchedBy(e, w.f.app.engine.db, tenant)));

  it('a goal change touches the goal and its tree, for its own tenant only', async () => {
    const events = await w.eventsOf(() =>
      w.tool(w.owner, 'set_goal_approval_mode', { goal_id: goalId, approval_mode: 'human' }),
    );
    assert.deepEqual(
      [...touched(events, w.f.owner.userId)],
      [`colony://goals/${goalId}`, `colony://goals/${goalId}/tree`],
    );
    assert.deepEqual([...touched(events, (other as { userId: number }).userId)], []);
  });

  it('a task claim touches its goal; a run touches the run, its transcript and its agent; a new goal changes the list', async () => {
    const claim = await w.eventsOf(() => w.tool(w.callerOf(w.f.agentToken), 'claim_task', { task_id: taskIds[1] }));
    assert.ok(touched(claim, w.f.owner.userId).has(`colony://goals/${goalId}/tree`));
    const runEvents = await w.eventsOf(() => {
      runs.again = w.run(ids.peer.agentId, [['agent', 'again']]);
    });
    const uris = touched(runEvents, w.f.owner.userId);
    for (const uri of [
      `colony://runs/${runs.again.runId}`,
      `colony://runs/${runs.again.runId}/transcript`,
      'colony://agents/peer',
    ])
      assert.ok(uris.has(uri), uri);
    const created = await w.eventsOf(() =>
      w.tool(w.owner, 'create_goal', { title: 'A later goal', description: 'Something more to do.' }),
    );
    assert.ok(created.some(resourceListChangedBy));
    assert.ok(!claim.some(resourceListChangedBy));
  });
});
