import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readAll } from '../../src/engine/store.js';
import type { TaskVerified } from '../../src/events/tasks.js';
import { listRuns, type RunRow } from '../../src/projections/run-queries.js';
import { getTask } from '../../src/projections/task-queries.js';
import { ok } from '../helpers/calls.js';
import { type RuntimeFixture, runtimeWithOwner } from '../helpers/runtime.js';

/**
 * The rejection loop through real runs (issue 34, Must 2 and its share of Must 5): a scripted agent hands
 * its task in, the owner's recipe rejects it, the task goes back to the agent, and the agent's NEXT run is
 * woken (verification_rejected) with the recipe's words in its prompt; it hands in again, is rejected
 * again past the goal's retry limit, the task fails and the owner is told — once. Real HTTP MCP, the
 * serving runtime's CommandVerifier, real processes (test/fixtures/agents/worker.ts).
 */
delete process.env.COLONY_ALLOWED_ROOTS; // the workspace is the only allowed root

const WORKER = `node --import ${import.meta.resolve('tsx')} ${join(process.cwd(), 'test/fixtures/agents/worker.ts')}`;
const WORK_TOOLS = ['whoami', 'claim_task', 'complete_task'];
const FEEDBACK = 'docs/index.md: 2 links are broken (/setup, /faq)';

const runsOf = (f: RuntimeFixture, agentId: number): RunRow[] =>
  listRuns(f.app.engine.db, { agentId, limit: 100 }).reverse();
const stdinOf = (f: RuntimeFixture, name: string, runId: number): string =>
  (
    JSON.parse(readFileSync(join(f.app.dataDir, 'workspace', 'agents', name, `run-${runId}.json`), 'utf8')) as {
      stdin: string;
    }
  ).stdin;

/** Waits until the runtime and the verifier are both idle and `done` holds (a verdict wakes a run, which hands in, …). */
async function settle(f: RuntimeFixture, done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i += 1) {
    await f.reactor.idle();
    await f.runtime.verifier.idle();
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(done(), 'the loop settled');
}

describe('the rejection loop, through real runs', () => {
  it("a recipe's rejection reaches the assignee's next run as feedback; past the retry limit the task fails and the owner is told once", async (t) => {
    const f = await runtimeWithOwner(t);
    await ok(f.owner, 'add_verifier', { name: 'links', command: `echo "${FEEDBACK}"; exit 4` });
    const spec = f.addRunner('spec', `WORKER_COMPLETE=1 ${WORKER}`, {}, { toolScope: WORK_TOOLS });
    const g = await ok(f.owner, 'create_goal', {
      title: 'Fix the docs',
      description: 'Every link works.',
      approval_mode: 'auto',
      max_rejections: 1,
    });
    const made = (await ok(f.owner, 'get_goal', { goal_id: g.goal_id })).goal as { require_evidence: boolean };
    assert.equal(made.require_evidence, true, 'on by default');
    const p = await ok(f.owner, 'propose_task_tree', {
      goal_id: g.goal_id,
      tree: {
        title: 'Fix the links',
        description: 'Fix every broken link in docs/.',
        verifier_config: { kind: 'command', recipe: 'links' },
      },
    });
    const taskId = (p.task_ids as number[])[0]!;
    await ok(await f.connect(spec.token), 'claim_task', { task_id: taskId });
    await settle(f, () => getTask(f.app.engine.db, taskId)!.status === 'failed');

    const verdicts = readAll(f.app.engine.db, { limit: 100_000 })
      .filter((e) => e.type === 'TaskVerified')
      .map((e) => e.data as TaskVerified['data']);
    assert.deepEqual(
      verdicts.map((v) => [v.verifierKind, v.recipe?.name, v.exitCode, v.to, v.rejections]),
      [
        ['command', 'links', 4, 'claimed', { count: 1, limit: 1 }],
        ['command', 'links', 4, 'failed', { count: 2, limit: 1 }],
      ],
    );

    // Two runs: the claim's, and the one the rejection woke with the recipe's feedback.
    const runs = runsOf(f, spec.agentId);
    assert.deepEqual(
      runs.map((r) => [r.source, r.taskId, r.status]),
      [
        ['task_assignment', taskId, 'succeeded'],
        ['verification_rejected', taskId, 'succeeded'],
      ],
      runs.map((r) => r.outputTail).join('\n'),
    );
    const prompt = runs[1]!.wakes.find((w) => w.source === 'verification_rejected')!.prompt!;
    assert.match(
      prompt,
      new RegExp(
        `^Your hand-in of task #${taskId} "Fix the links" was rejected by its recipe "links" \\(a command verifier; exit 4\\): rejection 1 of the 1`,
      ),
    );
    assert.ok(prompt.includes(`> ${FEEDBACK}`), prompt);
    assert.ok(prompt.includes(`complete_task {"task_id":${taskId},`), prompt);
    assert.match(prompt, /Another rejection fails the task and goes to your owner\./);
    assert.ok(stdinOf(f, 'spec', runs[1]!.runId).includes(`> ${FEEDBACK}`), 'the run was started with the feedback');
    assert.ok(!stdinOf(f, 'spec', runs[0]!.runId).includes(FEEDBACK), 'not before the rejection');

    // The owner is told once, when the retries are used up.
    const told = readAll(f.app.engine.db, { limit: 100_000 }).filter(
      (e) =>
        e.type === 'MessagePosted' &&
        (e.data as { metadata: Record<string, unknown> | null }).metadata?.max_rejections !== undefined,
    );
    assert.equal(told.length, 1);
    const body = (told[0]!.data as { body: string }).body;
    assert.match(
      body,
      new RegExp(`Task #${taskId} "Fix the links" failed verification .*It was rejected 2 times`, 's'),
    );
    assert.match(body, /yours to decide/);
    const task = getTask(f.app.engine.db, taskId)!;
    assert.deepEqual([task.status, task.rejections, task.rejectionLimit], ['failed', 2, 1]);
  });
});
