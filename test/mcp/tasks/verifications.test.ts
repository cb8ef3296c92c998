import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { JsonRpcResponseError, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { createGoal } from '../../../src/actions/goals.js';
import { proposeTaskTree } from '../../../src/actions/proposals.js';
import { cancelTask } from '../../../src/actions/tasks.js';
import { addRecipe } from '../../../src/actions/verifiers.js';
import { getTask, tasksOfGoal } from '../../../src/projections/task-queries.js';
import { runtimeFixture, type RuntimeFixture } from '../../helpers/runtime.js';
import { tasksClient, type TasksClient } from '../../helpers/tasks-client.js';
import { type Speaker } from '../../../src/events/principals.js';

/**
 * complete_task as an MCP task when a command verifier decides the hand-in (2026-07-28 tasks
 * extension): the task is working while the owner's recipe runs and completes with the verdict — the
 * Colony task's new status, the command's exit code and the end of its output — read from the log.
 * Other verifiers answer at once, as today. Through the requester library over real HTTP, with the
 * serving runtime's real CommandVerifier.
 */
delete process.env.COLONY_ALLOWED_ROOTS; // the workspace is the only allowed root

type Body = Record<string, unknown>;
type World = RuntimeFixture & { worker: TasksClient; owner: TasksClient; taskWith(recipe: string | null): number };

async function world(t: TestContext): Promise<World> {
  const f = await runtimeFixture({ agentTools: ['claim_task', 'complete_task'] });
  const clients: TasksClient[] = [];
  t.after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await f.close();
  });
  const owner: Speaker = { key: `user-${f.ownerId}`, name: 'owner', tenant: f.ownerId };
  const actor = { actor: 'user:owner' };
  let n = 0;
  const open = async (token: string) => {
    const c = await tasksClient(f.base, token);
    clients.push(c);
    return c;
  };
  return Object.assign(f, {
    worker: await open(f.agentToken),
    owner: await open(f.ownerToken),
    /** A goal with one approved task, verified by a recipe running `command` (null: the automatic verifier). */
    taskWith(command: string | null) {
      n += 1;
      if (command !== null)
        addRecipe(
          f.app,
          owner,
          { name: `check-${n}`, command, cwd: null, writable: false, timeoutSec: 30, secrets: [] },
          actor,
        );
      const goal = createGoal(
        f.app,
        owner,
        {
          title: `Goal ${n}`,
          description: 'A goal for the verifier task tests',
          budgets: { tokens: null, cents: null },
          maxSpawnDepth: 1,
          coordinatorConfig: 'default',
          approvalMode: 'auto',
        },
        actor,
      );
      proposeTaskTree(
        f.app,
        owner,
        goal.goalId,
        'One task.',
        {
          title: `Check ${n}`,
          description: 'Hand it in; the recipe decides.',
          ...(command === null ? {} : { verifier_config: { kind: 'command', recipe: `check-${n}` } }),
        },
        actor,
      );
      return tasksOfGoal(f.app.engine.db, goal.goalId)[0]!.taskId;
    },
  });
}

async function handIn(w: World, taskId: number) {
  const claim = await (await w.worker.session.callTool('claim_task', { task_id: taskId })).settle();
  assert.equal(claim.outcome.status, 'completed');
  return w.worker.session.callTool('complete_task', { task_id: taskId, summary: 'Done, see the check.' });
}

const body = (outcome: Parameters<typeof resultFromTaskOutcome>[0]): Body =>
  (resultFromTaskOutcome(outcome) as { structuredContent: Body }).structuredContent;

describe('complete_task as an MCP task, for a command verifier', () => {
  it('is working while the recipe runs, then completes with the verdict: done, exit code 0, the output', async (t) => {
    const w = await world(t);
    const id = w.taskWith('sleep 1; echo all checks passed');
    const execution = await handIn(w, id);
    assert.equal(execution.kind, 'task');
    const taskId = execution.handle!.taskId;
    assert.match(taskId, new RegExp(`^verify-${id}\\.\\d+-[\\w-]{22}$`));
    const working = await w.worker.session.task(taskId).snapshot();
    assert.deepEqual(
      [working.status, working.statusMessage],
      ['working', `task ${id} "Check 1" awaits its command verifier (check-1)`],
    );
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(body(outcome), {
      task_id: id,
      status: 'done',
      verdict: 'approve',
      reason: 'verifier command exited 0',
      exit_code: 0,
      output: 'all checks passed\n',
    });
    assert.equal(getTask(w.app.engine.db, id)!.status, 'done');
    // The owner sees it too; an agent that neither handed it in nor spawned the one who did does not.
    assert.equal((await w.owner.session.task(taskId).snapshot()).status, 'completed');
    const stranger = await tasksClient(w.base, w.addRunner('stranger', 'true').token);
    t.after(() => stranger.close());
    await assert.rejects(
      stranger.session.task(taskId).snapshot(),
      (e: unknown) => e instanceof JsonRpcResponseError && e.code === -32602,
    );
  });

  it("a failing recipe: completed (a verdict is a result, not a protocol fault) with the task's new status — claimed: back to its worker within the goal's retries — its exit code and output", async (t) => {
    const w = await world(t);
    const id = w.taskWith('echo "2 links are broken" >&2; exit 3');
    const { outcome } = await (await handIn(w, id)).settle();
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(body(outcome), {
      task_id: id,
      status: 'claimed',
      verdict: 'reject',
      reason: 'verifier command exited 3',
      exit_code: 3,
      output: '2 links are broken\n',
    });
  });

  it("cancelling the wait stops nothing (the verdict is the recipe's); the owner cancelling the Colony task cancels it", async (t) => {
    const w = await world(t);
    const id = w.taskWith('sleep 2; echo late');
    const execution = await handIn(w, id);
    const taskId = execution.handle!.taskId;
    await w.worker.session.cancelTask(taskId); // acknowledged, cooperative: the verifier still decides
    await w.runtime.verifier.idle();
    assert.equal((await w.worker.session.task(taskId).snapshot()).status, 'completed');
    assert.equal(getTask(w.app.engine.db, id)!.status, 'done');

    const second = w.taskWith('sleep 5; echo never');
    const waiting = await handIn(w, second);
    cancelTask(w.app, { key: `user-${w.ownerId}`, name: 'owner', tenant: w.ownerId }, second, 'not needed any more', {
      actor: 'user:owner',
    });
    const after = await w.worker.session.task(waiting.handle!.taskId).snapshot();
    assert.deepEqual(
      [after.status, after.statusMessage],
      ['cancelled', `task ${second} "Check 2" was cancelled by owner: not needed any more`],
    );
  });

  it("any other verifier answers at once: an auto-verified leaf of a goal that requires evidence awaits the owner's verdict", async (t) => {
    const w = await world(t);
    const id = w.taskWith(null);
    const execution = await handIn(w, id);
    assert.equal(execution.kind, 'immediate');
    const { outcome } = await execution.settle();
    assert.deepEqual(body(outcome), { task_id: id, status: 'awaiting_verification' });
  });
});
