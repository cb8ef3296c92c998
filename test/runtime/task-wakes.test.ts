import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setAgentProject, stopAgent } from '../../src/actions/runs/agent-controls.js';
import type { Wake } from '../../src/events/runs.js';
import { readAll } from '../../src/engine/store.js';
import { getProjectByName } from '../../src/projections/projects.js';
import { listRuns, type RunRow } from '../../src/projections/run-queries.js';
import { sessionMessages } from '../../src/projections/session-message-queries.js';
import { getTask } from '../../src/projections/task-queries.js';
import { wakesFor } from '../../src/runtime/wake-sources.js';
import { callTool, textOf } from '../helpers/mcp.js';
import { type RuntimeFixture, runtimeWithOwner } from '../helpers/runtime.js';
import { ok } from '../helpers/calls.js';

/**
 * Waits that end: the facts that used to leave a task waiting on someone nobody told
 * now wake that someone — a peer verifier when work awaits its verdict, whoever can close a
 * parent whose children are all done, and the project's agent when a project task is dispatched (as
 * xylocopa's poller did). Real HTTP MCP, real agent processes (test/fixtures/agents/worker.ts).
 */
const WORKER = `node --import ${import.meta.resolve('tsx')} ${join(process.cwd(), 'test/fixtures/agents/worker.ts')}`;
const WORK_TOOLS = ['whoami', 'claim_task', 'complete_task'];
type Body = Record<string, unknown>;
type F = RuntimeFixture & { owner: Client };

/** An auto-approved goal coordinated by `coordinator`: a root with two leaves (`leaf` merges into the first). */
async function goalWithTree(
  f: F,
  coordinator: string,
  leaf: Body = {},
): Promise<{ goalId: number; root: number; leaves: number[] }> {
  const g = await ok(f.owner, 'create_goal', {
    title: 'Closing goal',
    description: 'A goal whose tree closes.',
    coordinator_config: coordinator,
    approval_mode: 'auto',
    require_evidence: false, // auto-verified leaves close the tree on their own
  });
  const p = await ok(f.owner, 'propose_task_tree', {
    goal_id: g.goal_id,
    tree: {
      title: 'Root task',
      description: 'The root of the tree.',
      children: [
        { title: 'Leaf one', description: 'First leaf to work on.', acceptance_criteria: 'It is done well.', ...leaf },
        { title: 'Leaf two', description: 'Second leaf to work on.' },
      ],
    },
  });
  const ids = p.task_ids as number[];
  return { goalId: g.goal_id as number, root: ids[0]!, leaves: ids.slice(1) };
}

const runsOf = (f: RuntimeFixture, agentId: number): RunRow[] =>
  listRuns(f.app.engine.db, { agentId, limit: 100 }).reverse();
const woken = (f: RuntimeFixture, agentId: number, source: string): RunRow[] =>
  runsOf(f, agentId).filter((r) => r.wakes.some((w) => w.source === source));
/** The prompt a wake-up of `source` was queued with (RunQueued, or RunWakeMerged when it joined a waiting run). */
const promptOf = (run: RunRow, source: string): string => run.wakes.find((w) => w.source === source)?.prompt ?? '';
/** What the worker fixture was started with: its stdin and environment, written in its working directory. */
const started = (dir: string, runId: number) =>
  JSON.parse(readFileSync(join(dir, `run-${runId}.json`), 'utf8')) as { stdin: string; env: Record<string, string> };
const agentDir = (f: RuntimeFixture, name: string) => join(f.app.dataDir, 'workspace', 'agents', name);

async function cancel(f: F, taskId: number): Promise<void> {
  const ask = await ok(f.owner, 'cancel_task', { task_id: taskId, reason: 'not needed after all' });
  await ok(f.owner, 'cancel_task', {
    task_id: taskId,
    reason: 'not needed after all',
    confirmation_token: ask.confirm_token,
  });
}

describe('task wake-ups', () => {
  it('verification_requested: a task handed in for a peer wakes the peer with the summary and verify_task; its verdict over MCP ends the task done', async (t) => {
    const f = await runtimeWithOwner(t);
    const reviewer = f.addRunner(
      'reviewer',
      `WORKER_VERDICT=approve ${WORKER}`,
      {},
      { toolScope: ['whoami', 'verify_task'] },
    );
    const spec = f.addRunner('spec', `WORKER_COMPLETE=1 ${WORKER}`, {}, { toolScope: WORK_TOOLS });
    const { leaves } = await goalWithTree(f, 'default', {
      verifier_config: { kind: 'peer', agent_id: reviewer.agentId },
    });
    const leaf = leaves[0]!;
    await ok(await f.connect(spec.token), 'claim_task', { task_id: leaf });
    await f.reactor.idle();
    const [work] = runsOf(f, spec.agentId);
    assert.equal(work?.status, 'succeeded', work?.outputTail ?? '');
    const [review, ...more] = runsOf(f, reviewer.agentId);
    assert.equal(more.length, 0);
    assert.deepEqual(
      [review?.source, review?.taskId, review?.status],
      ['verification_requested', leaf, 'succeeded'],
      review?.outputTail ?? '',
    );
    const queued = readAll(f.app.engine.db, { limit: 100_000 }).find(
      (e) => e.type === 'RunQueued' && (e.data as { runId: number }).runId === review!.runId,
    )!;
    const prompt = (queued.data as { wake: Wake }).wake.prompt!;
    assert.match(prompt, new RegExp(`^Task #${leaf} "Leaf one" awaits your verdict: you are its peer verifier\\.`));
    assert.match(
      prompt,
      new RegExp(`Its assignee, spec \\(agent\\), handed it in .*\\n\\n> done by run ${work!.runId}\\n`),
    );
    assert.ok(
      prompt.includes(`verify_task {"task_id":${leaf},"verdict":"approve","reason":"what you checked"}`),
      prompt,
    );
    assert.ok(prompt.includes(`verify_task {"task_id":${leaf},"verdict":"reject","reason":"what is missing"}`), prompt);
    assert.doesNotMatch(prompt, /tool scope lacks/);
    const seen = started(agentDir(f, 'reviewer'), review!.runId);
    assert.ok(seen.stdin.includes(prompt), 'the wake prompt carries it');
    assert.match(
      seen.stdin,
      new RegExp(
        `# Task #${leaf}: Leaf one \\(awaiting_verification\\)[\\s\\S]*## Acceptance criteria\\n\\nIt is done well\\.`,
      ),
    );
    assert.match(seen.stdin, /# Wake-up: verification_requested/);
    assert.equal(seen.env.COLONY_TASK_ID, String(leaf));
    const task = getTask(f.app.engine.db, leaf)!;
    assert.deepEqual([task.status, task.verdict, task.verifiedBy], ['done', 'approve', 'peer:reviewer']);
  });

  it('children_done: the last child done (or cancelled) offers the unassigned parent to the coordinator, once, with the roll-up and how to close it', async (t) => {
    const f = await runtimeWithOwner(t);
    const coord = f.addRunner(
      'coord',
      'cat >/dev/null; echo noted',
      {},
      { toolScope: ['whoami', 'claim_task', 'complete_task', 'complete_goal'] },
    );
    const spec = f.addRunner('spec', `WORKER_COMPLETE=1 ${WORKER}`, {}, { toolScope: WORK_TOOLS });
    const { goalId, root, leaves } = await goalWithTree(f, 'coord');
    await ok(await f.connect(spec.token), 'claim_task', { task_id: leaves[0] });
    await f.reactor.idle();
    assert.deepEqual(woken(f, coord.agentId, 'children_done'), [], 'one child is still open');
    await cancel(f, leaves[1]!);
    await f.reactor.idle();
    const offers = woken(f, coord.agentId, 'children_done');
    assert.deepEqual(
      offers.map((r) => [r.taskId, r.goalId, r.status]),
      [[root, goalId, 'succeeded']],
    );
    const prompt = promptOf(offers[0]!, 'children_done');
    const work = runsOf(f, spec.agentId)[0]!;
    assert.match(
      prompt,
      new RegExp(
        `^All children of task #${root} "Root task" are done \\(1 done, 1 cancelled\\):\\n` +
          `- #${leaves[0]} "Leaf one": done by spec — summary: "done by run ${work.runId}"\\n- #${leaves[1]} "Leaf two": cancelled\\n`,
      ),
    );
    assert.ok(
      prompt.includes(
        `take it with claim_task {"task_id":${root}}, then hand it in with complete_task {"task_id":${root},`,
      ),
      prompt,
    );
    assert.ok(prompt.includes(`complete_goal {"goal_id":${goalId},"status":"completed"`), 'the root closes the goal');
    assert.match(
      sessionMessages(f.app.engine.db, offers[0]!.runId)[0]!.content,
      new RegExp(`# Task #${root}: Root task \\(approved\\)[\\s\\S]*# Wake-up: children_done\\n\\nAll children`),
    );
    // Once per parent: the children's facts read again (as after two finish before the reactor reads either) offer nothing more.
    const facts = readAll(f.app.engine.db, { limit: 100_000 }).filter(
      (e) =>
        (e.type === 'TaskVerified' || e.type === 'TaskCancelled') &&
        leaves.includes((e.data as { taskId: number }).taskId),
    );
    assert.equal(facts.length, 2);
    assert.equal(
      getTask(f.app.engine.db, root)!.status,
      'approved',
      'still open, so only the record stops a second offer',
    );
    for (const e of facts) assert.deepEqual(wakesFor(f.app.engine.db, e), []);
  });

  it('children_done: the coordinator takes each parent and hands it in, so the tree closes level by level up to its root', async (t) => {
    const f = await runtimeWithOwner(t);
    const closeOnOffer = `WORKER_CLAIM=children_done WORKER_COMPLETE=children_done ${WORKER}`;
    const coord = f.addRunner('coord', closeOnOffer, {}, { toolScope: [...WORK_TOOLS, 'complete_goal'] });
    const spec = f.addRunner('spec', `WORKER_COMPLETE=1 ${WORKER}`, {}, { toolScope: WORK_TOOLS });
    const g = await ok(f.owner, 'create_goal', {
      title: 'Deep goal',
      description: 'A chain of three tasks.',
      coordinator_config: 'coord',
      approval_mode: 'auto',
      require_evidence: false, // the auto-verified leaf closes the chain on its own
    });
    const [root, mid, leaf] = (
      await ok(f.owner, 'propose_task_tree', {
        goal_id: g.goal_id,
        tree: {
          title: 'Root task',
          description: 'The whole of it.',
          children: [
            {
              title: 'Middle task',
              description: 'Half of it.',
              children: [{ title: 'Leaf task', description: 'The work itself.' }],
            },
          ],
        },
      })
    ).task_ids as number[];
    await ok(await f.connect(spec.token), 'claim_task', { task_id: leaf });
    await f.reactor.idle();
    const offers = woken(f, coord.agentId, 'children_done');
    assert.deepEqual(
      offers.map((r) => [r.taskId, r.status]),
      [
        [mid, 'succeeded'],
        [root, 'succeeded'],
      ],
      offers.map((r) => r.outputTail).join('\n'),
    );
    assert.ok(
      promptOf(offers[1]!, 'children_done').includes(`complete_goal {"goal_id":${g.goal_id as number},`),
      "the root's offer says how the goal closes",
    );
    for (const id of [leaf, mid, root]) assert.equal(getTask(f.app.engine.db, id!)!.status, 'done');
  });

  it('children_done: a parent someone holds goes to its holder, who hands it in; the coordinator is not asked', async (t) => {
    const f = await runtimeWithOwner(t);
    const coord = f.addRunner('coord', 'cat >/dev/null; echo noted');
    const boss = f.addRunner('boss', `WORKER_COMPLETE=children_done ${WORKER}`, {}, { toolScope: WORK_TOOLS });
    const spec = f.addRunner('spec', `WORKER_COMPLETE=1 ${WORKER}`, {}, { toolScope: WORK_TOOLS });
    const { root, leaves } = await goalWithTree(f, 'coord');
    await ok(await f.connect(boss.token), 'claim_task', { task_id: root });
    const specClient = await f.connect(spec.token);
    for (const leaf of leaves) {
      await ok(specClient, 'claim_task', { task_id: leaf });
      await f.reactor.idle();
    }
    const [offer, ...again] = woken(f, boss.agentId, 'children_done');
    assert.equal(again.length, 0);
    assert.deepEqual([offer?.taskId, offer?.status], [root, 'succeeded'], offer?.outputTail ?? '');
    const prompt = promptOf(offer!, 'children_done');
    assert.ok(prompt.includes(`You hold task #${root}: hand it in with complete_task {"task_id":${root},`), prompt);
    assert.ok(
      prompt.includes(
        `It is the root of goal #${offer!.goalId}: once it is done, the goal's coordinator closes the goal.`,
      ),
      'only the coordinator is told to call complete_goal',
    );
    assert.deepEqual(woken(f, coord.agentId, 'children_done'), []);
    const closed = getTask(f.app.engine.db, root)!;
    assert.deepEqual([closed.status, closed.summary], ['done', `done by run ${offer!.runId}`]);
  });

  it("task_dispatched: a dispatched project task wakes the project's agent with the task, its model and effort (prompt and env); it claims, works and reports back", async (t) => {
    const f = await runtimeWithOwner(t);
    await ok(f.owner, 'project_create', { name: 'shop' });
    const shop = getProjectByName(f.app.engine.db, f.ownerId, 'shop')!;
    const builder = f.addRunner(
      'builder',
      `WORKER_CLAIM=task_dispatched WORKER_COMPLETE=task_dispatched ${WORKER}`,
      {},
      { toolScope: WORK_TOOLS },
    );
    setAgentProject(f.app, f.ownerId, builder.agentId, 'shop', 'user-1', { actor: 'user:owner' });
    const bystander = f.addRunner('bystander', 'cat >/dev/null');
    const created = await ok(f.owner, 'task_create', {
      title: 'Restock the shelves',
      project: 'shop',
      description: 'Count and refill every shelf.',
      model: 'claude-opus-4-8',
      effort: 'high',
      priority: 2,
    });
    const id = Number((created.task as { task_id: string }).task_id);
    await f.reactor.idle();
    assert.deepEqual(runsOf(f, builder.agentId), [], 'an INBOX task wakes nobody');
    await ok(f.owner, 'task_dispatch', { task_id: String(id) });
    await f.reactor.idle();
    const [run] = woken(f, builder.agentId, 'task_dispatched');
    assert.deepEqual(
      [run?.source, run?.taskId, run?.goalId, run?.depth, run?.status],
      ['task_dispatched', id, null, 0, 'succeeded'],
      run?.outputTail ?? '',
    );
    assert.equal(run!.wakes[0]!.by, `user-${f.ownerId}`);
    const seen = started(shop.path, run!.runId);
    assert.match(
      seen.stdin,
      new RegExp(`# Task #${id}: Restock the shelves \\(approved\\)\\n\\nCount and refill every shelf\\.`),
    );
    assert.match(seen.stdin, /Project: shop\. Model: claude-opus-4-8\. Effort: high\. Priority: 2\. Attempt: 1\./);
    assert.match(
      seen.stdin,
      new RegExp(
        `# Wake-up: task_dispatched\\n\\nTask #${id} "Restock the shelves" of project shop was dispatched \\(attempt 1\\)`,
      ),
    );
    assert.ok(
      seen.stdin.includes(`claim_task {"task_id":${id}}`) &&
        seen.stdin.includes(`complete_task {"task_id":${id},"summary":"what you did"}`),
    );
    assert.deepEqual(
      [seen.env.COLONY_TASK_MODEL, seen.env.COLONY_TASK_EFFORT, seen.env.COLONY_TASK_ID, seen.env.COLONY_WAKE_SOURCE],
      ['claude-opus-4-8', 'high', String(id), 'task_dispatched'],
    );
    assert.equal(getTask(f.app.engine.db, id)!.status, 'done');
    assert.match(textOf((await callTool(f.owner, 'task_get', { task_id: String(id) })).result), /- status: COMPLETE/);
    assert.deepEqual(runsOf(f, bystander.agentId), [], 'an agent outside the project is not asked');
  });

  it('task_dispatched passes the same gates: one level deeper than the dispatching run (trigger depth), a stopped agent is refused on the record, no project agent wakes nobody', async (t) => {
    const f = await runtimeWithOwner(t);
    for (const name of ['lab', 'empty']) await ok(f.owner, 'project_create', { name });
    const newTask = async (project: string, title: string) =>
      Number(((await ok(f.owner, 'task_create', { title, project })).task as { task_id: string }).task_id);
    const deep = await newTask('lab', 'Dispatched by an agent');
    const lone = f.addRunner('lone', 'cat >/dev/null; echo ok', { maxTriggerDepth: 1 });
    setAgentProject(f.app, f.ownerId, lone.agentId, 'lab', 'user-1', { actor: 'user:owner' });
    const planner = f.addRunner(
      'planner',
      `WORKER_DISPATCH=${deep} ${WORKER}`,
      {},
      { toolScope: ['whoami', 'task_dispatch'] },
    );
    const plan = f.reactor.wake({ agentId: planner.agentId, source: 'manual', by: 'user-1' });
    await f.reactor.idle();
    assert.equal((await f.reactor.whenDone(plan.run.runId)).status, 'succeeded');
    const [refused] = runsOf(f, lone.agentId);
    assert.deepEqual(
      [refused?.source, refused?.taskId, refused?.depth, refused?.status, refused?.gate],
      ['task_dispatched', deep, 1, 'refused', 'trigger_depth'],
    );
    assert.equal(refused!.wakes[0]!.by, `agent-${planner.agentId}`);
    assert.match(
      promptOf(refused!, 'task_dispatched'),
      /Your tool scope lacks claim_task, complete_task: ask the owner/,
      'it is told what it cannot do, not left to fail',
    );

    const later = await newTask('lab', 'Dispatched to a stopped agent');
    stopAgent(f.app, f.ownerId, lone.agentId, 'user-1', 'maintenance', { actor: 'user:owner' });
    await ok(f.owner, 'task_dispatch', { task_id: String(later) });
    await f.reactor.idle();
    const stopped = runsOf(f, lone.agentId).find((r) => r.taskId === later);
    assert.deepEqual([stopped?.source, stopped?.status, stopped?.gate], ['task_dispatched', 'refused', 'stopped']);

    const orphan = await newTask('empty', 'Nobody works here');
    await ok(f.owner, 'task_dispatch', { task_id: String(orphan) });
    await f.reactor.idle();
    assert.deepEqual(
      listRuns(f.app.engine.db, { limit: 100 }).filter((r) => r.taskId === orphan),
      [],
    );
    assert.equal(getTask(f.app.engine.db, orphan)!.status, 'approved', 'it stays PENDING for whoever claims it');
  });
});
