import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createGoal } from '../../src/actions/goals.js';
import { proposeTaskTree } from '../../src/actions/proposals.js';
import { createOwner, registerAgent } from '../../src/actions/principals.js';
import { claimTask } from '../../src/actions/tasks.js';
import { openApp, productProjections } from '../../src/app.js';
import { isDomainError } from '../../src/errors.js';
import { readAll } from '../../src/engine/store.js';
import { getTask } from '../../src/projections/task-queries.js';
import { getAgent } from '../../src/projections/principal-queries.js';
import { colony } from '../helpers/cli.js';
import { dumpTables } from '../helpers/engine.js';
import { httpFixture } from '../helpers/mcp-http.js';
import { textOf } from '../helpers/mcp.js';
import { prng, seedFrom } from '../helpers/prng.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { spawnScript, type Child } from '../helpers/processes.js';
import { ok } from '../helpers/calls.js';

/**
 * claim_task is a lease that exactly one agent gets, however the claims arrive:
 *
 *  (a) 100 agents, each with its own Streamable HTTP session on a real socket, fire claim_task at the
 *      same task at once (Promise.all), 100 rounds on 100 tasks: one success and 99 ErrAlreadyClaimed
 *      per round, one TaskClaimed per task in the log.
 *  (b) 4 OS processes open the same data dir (openApp) and claim the same 50 tasks in the same order as
 *      fast as they can: one winner per task, the others get ErrAlreadyClaimed, and the projections
 *      agree with the log (one TaskClaimed per task, the chain verifies, a rebuild changes nothing).
 *
 * For (b) this file is also the child: `node --import tsx claim-race.test.ts claim-child <dir> …`
 * prints "ready", waits for "go" on stdin, claims, and prints a JSON summary.
 */
const SELF = fileURLToPath(import.meta.url);
const CHILD_MODE = 'claim-child';

const tree = (leaves: number) => ({
  title: 'Race root',
  description: 'A root task whose leaves are raced for',
  children: Array.from({ length: leaves }, (_, i) => ({
    title: `Leaf ${i + 1}`,
    description: `Leaf task number ${i + 1} of the race`,
  })),
});

/** `contended`: losses on a task this process had just read as approved (outside any transaction) — real races. */
interface ChildSummary {
  name: string;
  agentId: number;
  won: number[];
  lost: number[];
  contended: number;
}

/** The child: claims every task in order for its own agent, as fast as it can. */
async function child([dataDir, agentIdArg, ownerIdArg, name, taskList]: string[]): Promise<void> {
  try {
    const app = openApp({ dataDir: dataDir! });
    const agentId = Number(agentIdArg);
    const by = { key: `agent-${agentId}`, name: name!, tenant: Number(ownerIdArg) };
    const taskIds = taskList!.split(',').map(Number);
    const stdin = createInterface({ input: process.stdin });
    const go = new Promise<void>((resolve) => stdin.on('line', (line) => line === 'go' && resolve()));
    process.stdout.write('ready\n');
    await go;
    stdin.close();
    const summary: ChildSummary = { name: name!, agentId, won: [], lost: [], contended: 0 };
    for (const taskId of taskIds) {
      const looked = getTask(app.engine.db, taskId)!.status;
      try {
        const c = claimTask(app, by, taskId, { actor: `agent:${name}` });
        if (c.taskId !== taskId || c.status !== 'claimed' || c.renewed)
          throw new Error(`odd claim of task ${taskId}: ${JSON.stringify(c)}`);
        summary.won.push(taskId);
      } catch (e) {
        if (!isDomainError(e) || e.code !== 'ErrAlreadyClaimed') throw e;
        summary.lost.push(taskId);
        if (looked === 'approved') summary.contended += 1;
      }
    }
    app.engine.close();
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (e) {
    process.stderr.write(
      `claim-child ${name} failed (${isDomainError(e) ? e.code : 'no code'}): ${(e as Error)?.stack ?? String(e)}\n`,
    );
    process.exit(1);
  }
}

function tests(): void {
  describe('claim race over HTTP: 100 sessions, one task at a time', () => {
    it('gives every task to exactly one of 100 concurrent claimers, 100 rounds', { timeout: 180_000 }, async (t) => {
      const AGENTS = 100;
      const ROUNDS = 100;
      const seed = seedFrom('CLAIM_RACE_SEED');
      t.diagnostic(`CLAIM_RACE_SEED=${seed}`);
      const rng = prng(seed);
      const f = await httpFixture({ agentTools: ['whoami', 'claim_task'] });
      const phase = ((at) => (what: string) => {
        t.diagnostic(`${what}: ${Math.round(performance.now() - at)} ms`);
        at = performance.now();
      })(performance.now());
      try {
        const ownerId = getAgent(f.app.engine.db, f.agentId)!.ownerId;
        const agents = Array.from({ length: AGENTS }, (_, i) =>
          registerAgent(
            f.app,
            {
              name: `claimer-${i}`,
              ownerId,
              model: 'test-model',
              systemPrompt: 'You claim tasks, quickly.',
              toolScope: ['whoami', 'claim_task'],
              tier: 'supervised',
              command: null,
              parentId: null,
              spawnDepth: 0,
            },
            { actor: 'user:owner' },
          ),
        );
        phase('100 agents registered');
        const owner = await f.connect(f.ownerToken);
        const goal = await ok(owner, 'create_goal', {
          title: 'Claim race',
          description: 'One hundred agents race for every task',
          approval_mode: 'auto',
        });
        const proposed = await ok(owner, 'propose_task_tree', { goal_id: goal.goal_id, tree: tree(ROUNDS) });
        assert.equal(proposed.status, 'approved');
        const taskIds = (proposed.task_ids as number[]).filter((id) => getTask(f.app.engine.db, id)!.parentId !== null);
        assert.equal(taskIds.length, ROUNDS);
        for (const id of taskIds) assert.equal(getTask(f.app.engine.db, id)!.status, 'approved');

        // Every session is open before the race. (They do not list the tools: the SDK client compiles an
        // output validator for every listed tool, ~0.2 s per session; the results are checked here instead.)
        const clients: Client[] = [];
        for (let i = 0; i < AGENTS; i += 20)
          clients.push(...(await Promise.all(agents.slice(i, i + 20).map((a) => f.connect(a.token)))));
        const whoami = await Promise.all(
          clients.map(
            async (c) => (await c.callTool({ name: 'whoami', arguments: {} })).structuredContent as { id: number },
          ),
        );
        assert.deepEqual(
          whoami.map((w) => w.id),
          agents.map((a) => a.agentId),
          'each session runs as its own agent',
        );
        phase('sessions connected');

        const winners = new Map<number, number>();
        const started = performance.now();
        const everyone = clients.map((_, i) => i);
        for (const taskId of taskIds) {
          // All 100 calls are in flight together; the order they are sent in changes every round.
          const order = rng.sample(everyone, AGENTS);
          const sent = await Promise.all(
            order.map((i) => clients[i]!.callTool({ name: 'claim_task', arguments: { task_id: taskId } })),
          );
          const results: CallToolResult[] = [];
          order.forEach((i, k) => (results[i] = sent[k] as CallToolResult));
          const won = results.flatMap((r, i) => (r.isError ? [] : [i]));
          assert.equal(won.length, 1, `task ${taskId}: ${won.length} claims succeeded`);
          const winner = won[0]!;
          const body = results[winner]!.structuredContent as {
            task_id: number;
            status: string;
            renewed: boolean;
            claimed_at: string;
            lease_expires_at: string;
          };
          assert.deepEqual([body.task_id, body.status, body.renewed], [taskId, 'claimed', false]);
          assert.ok(Date.parse(body.lease_expires_at) > Date.parse(body.claimed_at), JSON.stringify(body));
          results.forEach((r, i) => {
            if (i === winner) return;
            assert.ok(textOf(r).startsWith('ErrAlreadyClaimed: '), `task ${taskId}, claimer-${i}: ${textOf(r)}`);
            assert.equal((r.structuredContent as { error: { code: string } }).error.code, 'ErrAlreadyClaimed');
          });
          winners.set(taskId, agents[winner]!.agentId);
        }
        t.diagnostic(
          `${ROUNDS} rounds × ${AGENTS} claims in ${Math.round(performance.now() - started)} ms; ${new Set(winners.values()).size} distinct winners`,
        );

        const events = readAll(f.app.engine.db, { limit: 1e9 });
        for (const taskId of taskIds) {
          const claims = events.filter((e) => e.streamId === `task-${taskId}` && e.type === 'TaskClaimed');
          assert.equal(claims.length, 1, `task ${taskId}: one TaskClaimed in the log`);
          assert.equal((claims[0]!.data as { agentId: number }).agentId, winners.get(taskId));
          const row = getTask(f.app.engine.db, taskId)!;
          assert.deepEqual(
            [row.status, row.assigneeAgentId],
            ['claimed', winners.get(taskId)],
            `task ${taskId} in the projection`,
          );
        }
        assert.equal(events.filter((e) => e.type === 'TaskClaimed').length, ROUNDS, 'no other claim was appended');
        assert.ok(f.app.engine.verify().ok);
      } finally {
        await f.close();
      }
    });
  });

  describe('claim race across processes: 4 writers on one data dir', () => {
    it(
      'gives every task to exactly one process; the losers get ErrAlreadyClaimed; projections agree with the log',
      { timeout: 120_000 },
      async (t) => {
        const WRITERS = 4;
        const TASKS = 50;
        const { dir, cleanup } = tempDir('colony-claim-race-');
        let children: Child[] = [];
        try {
          const setup = openApp({ dataDir: dir });
          const owner = createOwner(setup, 'owner', { actor: 'system' });
          const by = { key: `user-${owner.userId}`, name: 'owner', tenant: owner.userId };
          const agents = Array.from({ length: WRITERS }, (_, i) =>
            registerAgent(
              setup,
              {
                name: `racer-${i}`,
                ownerId: owner.userId,
                model: 'test-model',
                systemPrompt: 'You claim tasks, quickly.',
                toolScope: ['claim_task'],
                tier: 'supervised',
                command: null,
                parentId: null,
                spawnDepth: 0,
              },
              { actor: 'user:owner' },
            ),
          );
          const goal = createGoal(
            setup,
            by,
            {
              title: 'Process race',
              description: 'Four processes race for every task',
              budgets: { tokens: null, cents: null },
              maxSpawnDepth: 3,
              coordinatorConfig: 'default',
              approvalMode: 'auto',
            },
            { actor: 'user:owner' },
          );
          const proposed = proposeTaskTree(setup, by, goal.goalId, 'race', tree(TASKS), { actor: 'user:owner' });
          const taskIds = proposed.taskIds.filter((id) => getTask(setup.engine.db, id)!.parentId !== null);
          assert.equal(taskIds.length, TASKS);
          setup.engine.close();

          children = agents.map((a) =>
            spawnScript(SELF, [CHILD_MODE, dir, String(a.agentId), String(owner.userId), a.name, taskIds.join(',')]),
          );
          await Promise.all(children.map((c) => c.waitForLine('ready'))); // every process has opened the app before any claims
          for (const c of children) c.proc.stdin!.write('go\n');
          const codes = (await Promise.all(children.map((c) => c.exit))).map((e) => e.code);
          codes.forEach((code, i) => assert.equal(code, 0, `${agents[i]!.name} failed:\n${children[i]!.stderr()}`));
          const summaries = children.map((c) => JSON.parse(c.lines.at(-1)!) as ChildSummary);
          const contended = summaries.reduce((n, s) => n + s.contended, 0);
          t.diagnostic(
            `wins per process: ${summaries.map((s) => `${s.name} ${s.won.length}`).join(', ')}; ${contended} losses on a task read as approved just before`,
          );
          assert.ok(contended > 0, 'the race never happened: no process lost a task it had just seen approved');

          const app = openApp({ dataDir: dir });
          try {
            for (const s of summaries)
              assert.equal(s.won.length + s.lost.length, TASKS, `${s.name} tried every task once`);
            const events = readAll(app.engine.db, { limit: 1e9 });
            for (const taskId of taskIds) {
              const winners = summaries.filter((s) => s.won.includes(taskId));
              assert.equal(
                winners.length,
                1,
                `task ${taskId}: ${winners.map((w) => w.name).join(', ') || 'nobody'} won`,
              );
              assert.equal(
                summaries.filter((s) => s.lost.includes(taskId)).length,
                WRITERS - 1,
                `task ${taskId}: the others got ErrAlreadyClaimed`,
              );
              const claims = events.filter((e) => e.streamId === `task-${taskId}` && e.type === 'TaskClaimed');
              assert.equal(claims.length, 1, `task ${taskId}: one TaskClaimed`);
              assert.equal((claims[0]!.data as { agentId: number }).agentId, winners[0]!.agentId);
              assert.equal(claims[0]!.meta.actor, `agent:${winners[0]!.name}`);
              const row = getTask(app.engine.db, taskId)!;
              assert.deepEqual(
                [row.status, row.assigneeAgentId, row.assigneeName],
                ['claimed', winners[0]!.agentId, winners[0]!.name],
              );
            }
            assert.equal(
              events.filter((e) => e.type === 'TaskClaimed').length,
              TASKS,
              'nothing but the winning claims was appended',
            );
            const verified = app.engine.verify();
            assert.ok(verified.ok, JSON.stringify(verified));
            const tables = productProjections.flatMap((p) => p.tables as readonly string[]);
            const incremental = dumpTables(app.engine.db, tables);
            app.engine.rebuild();
            assert.deepEqual(
              dumpTables(app.engine.db, tables),
              incremental,
              'the projections equal a rebuild from the log',
            );
          } finally {
            app.engine.close();
          }
          const cli = colony(['verify', '--data', dir, '--json']);
          assert.equal(cli.code, 0, cli.stderr);
          assert.equal((JSON.parse(cli.stdout) as { ok: boolean }).ok, true);
        } finally {
          for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
          await Promise.all(children.map((c) => c.exit));
          cleanup();
        }
      },
    );
  });
}

// Last, so that every const above is initialized when the child starts.
if (process.argv[2] === CHILD_MODE) await child(process.argv.slice(3));
else tests();
