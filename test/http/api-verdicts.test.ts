import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerAgent } from '../../src/actions/principals.js';
import { getGoal } from '../../src/projections/goal-queries.js';
import { getUserByName } from '../../src/projections/principal-queries.js';
import { getTask } from '../../src/projections/task-queries.js';
import { ok } from '../helpers/calls.js';
import { httpFixture, type HttpFixture } from '../helpers/mcp-http.js';
import { Browser, type Body } from './console-client.js';

/**
 * "Done only with evidence" over real sockets, the owner's routes: POST /api/tasks/:id/verdict (a rejection
 * needs a reason; within the retry limit it goes back to the assignee), GET /api/tasks/:id with whose verdict
 * it waits for and every verdict, POST /api/tasks/:id/retry after the limit, POST /api/goals/:id/evidence.
 * An agent's session, bad input and unknown ids are refused with nothing written.
 */
let f: HttpFixture;
let owner: Browser;
let agent: Browser;

before(async () => {
  f = await httpFixture({ agentTools: ['claim_task', 'complete_task'] });
  owner = new Browser(f);
  assert.equal((await owner.signIn(f.ownerToken)).status, 200);
  agent = new Browser(f);
  assert.equal((await agent.signIn(f.agentToken)).status, 200);
});
after(() => f.close());

let workers = 0;
/** A goal (max_rejections 1) whose one auto-verified leaf a worker of its own handed in (the one it returns). */
async function handedIn(): Promise<{ goalId: number; taskId: number; token: string }> {
  const { token } = registerAgent(
    f.app,
    {
      name: `writer-${(workers += 1)}`,
      ownerId: getUserByName(f.app.engine.db, 'owner')!.userId,
      model: 'test-model',
      systemPrompt: 'You write pages.',
      toolScope: ['claim_task', 'complete_task'],
      tier: 'supervised',
      command: null,
      parentId: null,
      spawnDepth: 0,
    },
    { actor: 'user:owner' },
  );
  const mcp = await f.connect(f.ownerToken);
  const g = await ok(mcp, 'create_goal', {
    title: `Goal ${Math.random()}`,
    description: 'A goal for the verdict routes.',
    approval_mode: 'auto',
    max_rejections: 1,
  });
  const p = await ok(mcp, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: { title: 'Write it', description: 'Write the page.' },
  });
  const taskId = (p.task_ids as number[])[0]!;
  const worker = await f.connect(token);
  await ok(worker, 'claim_task', { task_id: taskId });
  await ok(worker, 'complete_task', { task_id: taskId, summary: 'written' });
  return { goalId: g.goal_id as number, taskId, token };
}

async function refusedHere(as: Browser, path: string, body: Body, status: number, code: string): Promise<void> {
  const head = f.app.engine.head().position;
  const r = await as.json(path, { method: 'POST', body }, status);
  assert.equal((r.error as Body | undefined)?.code ?? r.error_code ?? r.code, code, JSON.stringify(r));
  assert.equal(f.app.engine.head().position, head, `${path} wrote nothing`);
}

describe('the verdict routes', () => {
  it('a rejection with its reason goes back to the assignee; past the limit it fails; a retry starts over', async () => {
    const { taskId, token } = await handedIn();
    const before = await owner.json(`/tasks/${taskId}`);
    assert.deepEqual(
      [before.waits_for, before.rejections, before.max_rejections, before.verdicts],
      ['owner', 0, 1, []],
    );
    await refusedHere(owner, `/tasks/${taskId}/verdict`, { verdict: 'reject' }, 400, 'ErrInvalidInput');
    await refusedHere(owner, `/tasks/${taskId}/verdict`, { verdict: 'maybe', reason: 'hmm' }, 400, 'ErrInvalidInput');
    await refusedHere(agent, `/tasks/${taskId}/verdict`, { verdict: 'approve' }, 403, 'ErrForbidden');
    await refusedHere(owner, '/tasks/9999/verdict', { verdict: 'approve' }, 404, 'ErrTaskNotFound');
    const r = await owner.json(`/tasks/${taskId}/verdict`, {
      method: 'POST',
      body: { verdict: 'reject', reason: 'The page has no title' },
    });
    assert.deepEqual(r, { task_id: taskId, status: 'claimed', verdict: 'reject', rejections: 1 });
    await ok(await f.connect(token), 'complete_task', { task_id: taskId, summary: 'titled' });
    const failed = await owner.json(`/tasks/${taskId}/verdict`, {
      method: 'POST',
      body: { verdict: 'reject', reason: 'Still no title' },
    });
    assert.equal(failed.status, 'failed');
    const d = await owner.json(`/tasks/${taskId}`);
    assert.deepEqual(
      (d.verdicts as Body[]).map((v) => [v.verdict, v.verifier_kind, v.verifier, v.reason, v.to, v.rejection]),
      [
        ['reject', 'owner', 'owner', 'The page has no title', 'claimed', { count: 1, limit: 1 }],
        ['reject', 'owner', 'owner', 'Still no title', 'failed', { count: 2, limit: 1 }],
      ],
    );
    const retried = await owner.json(`/tasks/${taskId}/retry`, { method: 'POST', body: {} });
    assert.deepEqual(retried, { task_id: taskId, status: 'approved', attempt: 2 });
    assert.equal(getTask(f.app.engine.db, taskId)!.rejections, 0, 'a new attempt');
  });

  it("POST /api/goals/:id/evidence sets the owner's rule; bad input, an empty change and an agent are refused", async () => {
    const { goalId } = await handedIn();
    await refusedHere(owner, `/goals/${goalId}/evidence`, {}, 400, 'ErrInvalidInput');
    await refusedHere(owner, `/goals/${goalId}/evidence`, { max_rejections: 11 }, 400, 'ErrInvalidInput');
    await refusedHere(owner, `/goals/${goalId}/evidence`, { require_evidence: 'yes' }, 400, 'ErrInvalidInput');
    await refusedHere(agent, `/goals/${goalId}/evidence`, { require_evidence: false }, 403, 'ErrForbidden');
    const r = await owner.json(`/goals/${goalId}/evidence`, { method: 'POST', body: { require_evidence: false } });
    assert.deepEqual(r, { goal_id: goalId, require_evidence: false, max_rejections: 1 });
    assert.equal(getGoal(f.app.engine.db, goalId)!.requireEvidence, false);
  });
});
