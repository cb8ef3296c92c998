import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskCommand, VerifyTask } from '../../src/commands/task-types.js';
import { taskDecider } from '../../src/commands/tasks.js';
import type { DecideContext } from '../../src/engine/decider.js';
import { memoryIds } from '../../src/engine/ids.js';
import type { TaskEvent, TaskVerified, VerifierConfig } from '../../src/events/tasks.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * "Done only with evidence", the task decider's side (issue 34, Must 2): in a goal that requires evidence an
 * auto verifier decides no leaf — the hand-in waits for a verdict; the owner of the task's tenant may judge
 * any hand-in, nobody else as the owner; a peer in the assignee's lineage is refused; a rejection within the
 * goal's retry limit sends the task back to its assignee (claimed, a fresh lease, its reservation), past it
 * the task fails; a dispatch starts a new attempt with no rejections. Events are checked field by field.
 */
const T0 = '2026-01-01T00:00:00.000Z';
const LEASE = 30 * 60_000;
const worker = { agentId: 3, name: 'worker' };
const reviewer = { agentId: 5, name: 'reviewer' };
const owner = { key: 'user-1', name: 'owner' };
const system = { key: 'system', name: 'system' };
const recipe: VerifierConfig = { kind: 'command', cmd: 'npm test', recipe: 'unit-tests', recipeId: 4 };

const ctx = (now = T0): DecideContext => ({ now, actor: 'tester', ids: memoryIds({ message: 100 }) });
const stateOf = (events: readonly TaskEvent[]) =>
  events.reduce((s, e) => taskDecider.evolve(s, e), taskDecider.initialState());
/** Decides `c` after `events` and returns the events with them (the next command's history). */
function step(events: readonly TaskEvent[], c: TaskCommand, now = T0): TaskEvent[] {
  return [...events, ...taskDecider.decide(c, stateOf(events), ctx(now))];
}
const last = (events: readonly TaskEvent[]): TaskEvent => events[events.length - 1]!;

const create = (verifier: VerifierConfig): TaskCommand => ({
  type: 'CreateTask',
  task: {
    taskId: 7,
    goalId: 1,
    parentId: null,
    depth: 0,
    ancestry: [],
    title: 'Scan docs',
    description: 'Scan every page for dead links',
    acceptanceCriteria: 'no dead links',
    billingCode: 'docs',
    budgets: { tokens: null, cents: null },
    verifier,
    heartbeat: null,
    status: 'approved',
    proposalId: 2,
    channelId: 3,
    by: owner,
  },
});
const claim: TaskCommand = {
  type: 'ClaimTask',
  agent: { ...worker, quarantined: false },
  leaseMs: LEASE,
  reservation: { tokens: 0, cents: 0 },
  goalStatus: 'active',
  inVerifierLineage: false,
  budget: { lines: [], replaces: { tokens: 0, cents: 0 } },
  blockers: [],
};
const complete = (ownerVerifies: boolean): TaskCommand => ({
  type: 'CompleteTask',
  agent: worker,
  summary: 'all links fixed',
  artifactMessageIds: [],
  ownerVerifies,
});
const retry = (limit: number): VerifyTask['retry'] => ({
  limit,
  leaseMs: LEASE,
  reservation: { tokens: 0, cents: 50 },
});
const byRecipe = (exitCode: number, limit: number | null): TaskCommand => ({
  type: 'VerifyTask',
  verdict: exitCode === 0 ? 'approve' : 'reject',
  reason: `verifier command exited ${exitCode}`,
  verifier: system,
  as: { kind: 'command', exitCode, output: 'test/links.test.ts: 2 links are broken\n' },
  assigneeInVerifierLineage: false,
  retry: limit === null ? null : retry(limit),
});
const byOwner = (verdict: 'approve' | 'reject', who = owner): TaskCommand => ({
  type: 'VerifyTask',
  verdict,
  reason: verdict === 'approve' ? 'approved by owner' : 'the summary names no page',
  verifier: who,
  as: { kind: 'owner', ownerId: 1 },
  assigneeInVerifierLineage: false,
  retry: retry(2),
});
const handedIn = (verifier: VerifierConfig, ownerVerifies = false): TaskEvent[] =>
  [create(verifier), claim, complete(ownerVerifies)].reduce<TaskEvent[]>((h, c) => step(h, c), []);
const verdictOf = (events: readonly TaskEvent[]): TaskVerified['data'] => {
  const e = last(events);
  assert.equal(e.type, 'TaskVerified');
  return (e as TaskVerified).data;
};

describe('done only with evidence: an auto verifier decides no leaf', () => {
  it('a leaf of a goal that requires evidence waits for a verdict; elsewhere the auto verifier decides at once', () => {
    const waiting = handedIn({ kind: 'auto' }, true);
    assert.equal(last(waiting).type, 'TaskCompleted');
    assert.equal(stateOf(waiting).status, 'awaiting_verification');
    const auto = handedIn({ kind: 'auto' }, false);
    assert.deepEqual([verdictOf(auto).verifierKind, verdictOf(auto).to], ['auto', 'done']);
  });

  it("the owner's verdict decides it: approve → done, recorded as the owner's", () => {
    const v = verdictOf(step(handedIn({ kind: 'auto' }, true), byOwner('approve')));
    assert.deepEqual(
      [v.verdict, v.verifierKind, v.verifier, v.to, v.rejections, v.returned],
      ['approve', 'owner', owner, 'done', undefined, undefined],
    );
  });

  it("an owner's verdict from anyone else, or before the hand-in, is refused", () => {
    const other = { key: 'user-2', name: 'mallory' };
    spec(taskDecider)
      .given(handedIn({ kind: 'auto' }, true))
      .when(byOwner('approve', other))
      .thenThrows('ErrNotPermittedVerifier', 'only the owner');
    spec(taskDecider)
      .given(handedIn({ kind: 'auto' }, true))
      .when(byOwner('approve', { key: 'agent-3', name: 'worker' }))
      .thenThrows('ErrNotPermittedVerifier');
    const claimedOnly = [create({ kind: 'auto' }), claim].reduce<TaskEvent[]>((h, c) => step(h, c), []);
    spec(taskDecider).given(claimedOnly).when(byOwner('approve')).thenThrows('ErrTaskNotAwaitingVerification');
  });

  it("a peer in the assignee's lineage is refused; the owner may judge a peer-verified hand-in", () => {
    const peer: VerifierConfig = { kind: 'peer', agent_id: reviewer.agentId };
    spec(taskDecider)
      .given(handedIn(peer))
      .when({
        type: 'VerifyTask',
        verdict: 'approve',
        reason: 'fine',
        verifier: { key: 'agent-5', name: 'reviewer' },
        as: { kind: 'peer', agentId: reviewer.agentId },
        assigneeInVerifierLineage: true,
        retry: retry(2),
      })
      .thenThrows('ErrSelfVerification');
    assert.equal(verdictOf(step(handedIn(peer), byOwner('approve'))).to, 'done');
  });
});

describe('done only with evidence: the rejection loop', () => {
  it('a rejection within the limit goes back to the assignee with a fresh lease and reservation; the recipe and exit are recorded', () => {
    const now = '2026-01-01T01:00:00.000Z';
    const after = step(handedIn(recipe), byRecipe(3, 2), now);
    const v = verdictOf(after);
    assert.deepEqual(v.recipe, { name: 'unit-tests', id: 4 });
    assert.deepEqual([v.verdict, v.exitCode, v.to], ['reject', 3, 'claimed']);
    assert.match(v.output!, /2 links are broken/);
    assert.deepEqual(v.rejections, { count: 1, limit: 2 });
    assert.deepEqual(v.returned, {
      agentId: worker.agentId,
      leaseExpiresAt: new Date(Date.parse(now) + LEASE).toISOString(),
      reservation: { tokens: 0, cents: 50 },
    });
    assert.equal(v.notice.metadata.rejections, 1);
    assert.equal(v.notice.metadata.returned_to, 'worker');
    const s = stateOf(after);
    assert.ok(s.status === 'claimed' && s.rejections === 1 && s.assignee?.agentId === worker.agentId);
    // The task is the assignee's again: it hands it in as before.
    assert.equal(last(step(after, complete(false), now)).type, 'TaskCompleted');
  });

  it('up to the limit, then the next rejection fails the task; a dispatch starts over', () => {
    let h = handedIn(recipe);
    const seen: [string, number | undefined][] = [];
    for (let i = 0; i < 3; i += 1) {
      if (i > 0) h = step(h, complete(false));
      h = step(h, byRecipe(1, 2));
      seen.push([verdictOf(h).to, verdictOf(h).rejections?.count]);
    }
    assert.deepEqual(seen, [
      ['claimed', 1],
      ['claimed', 2],
      ['failed', 3],
    ]);
    assert.equal(verdictOf(h).returned, undefined);
    const again = [{ type: 'DispatchTask', by: owner } as TaskCommand, claim, complete(false), byRecipe(1, 2)].reduce(
      (acc, c) => step(acc, c),
      h,
    );
    assert.deepEqual([verdictOf(again).to, verdictOf(again).rejections], ['claimed', { count: 1, limit: 2 }]);
  });

  it('a limit of 0 fails at the first rejection; no limit (a project task, an old goal) fails as before', () => {
    const zero = verdictOf(step(handedIn(recipe), byRecipe(1, 0)));
    assert.deepEqual([zero.to, zero.rejections, zero.returned], ['failed', { count: 1, limit: 0 }, undefined]);
    const none = verdictOf(step(handedIn(recipe), byRecipe(1, null)));
    assert.deepEqual([none.to, none.rejections], ['failed', undefined]);
  });

  it("the owner's rejection is feedback like any other: back to the assignee within the limit", () => {
    const v = verdictOf(step(handedIn({ kind: 'auto' }, true), byOwner('reject')));
    assert.deepEqual([v.to, v.reason, v.rejections?.count], ['claimed', 'the summary names no page', 1]);
  });
});
