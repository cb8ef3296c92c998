import assert from 'node:assert/strict';
import { existsSync, readdirSync, statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { configureSandbox } from '../../src/actions/runs/agent-controls.js';
import type { SandboxOverrides } from '../../src/events/sandbox.js';
import { readAll } from '../../src/engine/store.js';
import type { RunRow } from '../../src/projections/run-queries.js';
import { ok } from '../helpers/calls.js';
import { runtimeFixture, type RuntimeFixture } from '../helpers/runtime.js';

/**
 * Through the real reactor, harness and sandbox: what a run writes is bounded. An agent that writes file after
 * file into its workspace is stopped once its writable directories pass its disk quota (limit `disk`, the
 * reason says how much and where); below the data directory's free-space floor no process starts (an agent
 * run fails with the reason, a command verifier is not run and its owner is told), and a process running
 * when free space falls below it is killed.
 */
const MB = 1024 * 1024;

function withEnv(t: TestContext, name: string, value: string): void {
  const saved = process.env[name];
  process.env[name] = value;
  t.after(() => {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  });
}

async function setup(t: TestContext, agentTools?: string[]): Promise<RuntimeFixture> {
  const f = await runtimeFixture({ agentTools });
  t.after(() => f.close());
  return f;
}

async function runOf(f: RuntimeFixture, name: string, command: string, sandbox: Partial<SandboxOverrides>) {
  const a = f.addRunner(name, command, { timeoutSec: 30 });
  configureSandbox(f.app, f.ownerId, a.agentId, sandbox, 'owner', { actor: 'user:owner' });
  return f.reactor.whenDone(f.reactor.wake({ agentId: a.agentId, source: 'manual', by: 'user-1' }).run.runId);
}

/** Sizes of the files an agent wrote into its workspace, by name. */
function written(f: RuntimeFixture, name: string): Record<string, number> {
  const dir = join(f.app.dataDir, 'workspace', 'agents', name);
  return Object.fromEntries(
    readdirSync(dir)
      .filter((n) => n.endsWith('.bin'))
      .map((n) => [n, statSync(join(dir, n)).size]),
  );
}

/** Writes `count` files of 10 MB, one a second, then says so. */
const filler = (count: number) =>
  `cat >/dev/null; i=0; while [ $i -lt ${count} ]; do i=$((i+1)); head -c ${10 * MB} /dev/zero > f$i.bin; sleep 1; done; echo all written`;

describe('disk: a quota on what a run writes, a floor under the data directory', () => {
  it('five 10 MB files against a 20 MB quota: the run is stopped with limit disk, and nothing grows after', async (t) => {
    const f = await setup(t);
    const run = await runOf(f, 'filler', filler(5), { diskMb: 20 });
    assert.equal(run.limitHit, 'disk', `${run.status} ${run.outputTail}`);
    assert.equal(run.status, 'failed');
    assert.doesNotMatch(run.outputTail ?? '', /all written/);
    const ws = join(f.app.dataDir, 'workspace', 'agents', 'filler');
    assert.match(
      run.outputTail ?? '',
      new RegExp(
        `colony: stopped: its writable directories hold [\\d.]+ MB, over its disk quota of 20 MB \\(${ws} [\\d.]+ MB, `,
      ),
    );
    const files = written(f, 'filler');
    assert.ok(!('f4.bin' in files) && !('f5.bin' in files), JSON.stringify(files));
    assert.ok(Object.values(files).reduce((a, b) => a + b, 0) <= 30 * MB, JSON.stringify(files));
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(written(f, 'filler'), files, 'nothing writes after the run was stopped');
    assert.deepEqual([run.sandbox?.limits.diskMb, run.sandbox?.enforcement.disk], [20, 'polled']);
    const under = await runOf(f, 'modest', filler(1), { diskMb: 20 });
    assert.deepEqual([under.status, under.limitHit], ['succeeded', null], under.outputTail ?? '');
  });

  it('below the free-space floor nothing starts: an agent run fails with the reason, a verifier is not run and its owner is told', async (t) => {
    const f = await setup(t, ['whoami', 'claim_task', 'complete_task']);
    const owner = await f.connect(f.ownerToken);
    const worker = await f.connect(f.agentToken);
    await ok(owner, 'add_verifier', { name: 'check', command: 'echo checked > /dev/null; exit 0' });
    const g = await ok(owner, 'create_goal', {
      title: 'Full disk',
      description: 'No room on the disk.',
      approval_mode: 'auto',
    });
    const taskId = (
      (
        await ok(owner, 'propose_task_tree', {
          goal_id: g.goal_id,
          tree: {
            title: 'Checked',
            description: 'Checked by the check recipe.',
            verifier_config: { kind: 'command', recipe: 'check' },
          },
        })
      ).task_ids as number[]
    )[0]!;
    withEnv(t, 'COLONY_MIN_FREE_MB', String(10 ** 9));
    const run: RunRow = await runOf(f, 'hopeful', 'cat >/dev/null; echo ran > ran.txt', {});
    assert.equal(run.status, 'failed');
    assert.match(
      run.reason ?? '',
      new RegExp(
        `^not started: only \\d+ MB free under the data directory ${f.app.dataDir}, below the floor of 1000000000 MB \\(COLONY_MIN_FREE_MB\\)`,
      ),
    );
    assert.equal(run.outputTail, null, 'nothing ran');
    assert.ok(!existsSync(join(f.app.dataDir, 'workspace', 'agents', 'hopeful', 'ran.txt')));
    await ok(worker, 'claim_task', { task_id: taskId });
    await ok(worker, 'complete_task', { task_id: taskId, summary: 'done' });
    await new Promise((r) => setTimeout(r, 100));
    await f.runtime.verifier.idle();
    assert.equal(readAll(f.app.engine.db, { limit: 10_000 }).filter((e) => e.type === 'TaskVerified').length, 0);
    const dms = (await ok(owner, 'read_inbox', {})).messages as { body: string }[];
    assert.equal(
      dms.filter((m) => /awaits its command verifier, which was not run: not started: only/.test(m.body)).length,
      1,
    );
  });

  it('free space falling below the floor while a run writes kills it at once, limit disk', async (t) => {
    const f = await setup(t);
    // A floor 40 MB under what is free now: the run's own writes cross it (other writers on the disk only bring that sooner).
    const s = statfsSync(f.app.dataDir);
    withEnv(t, 'COLONY_MIN_FREE_MB', String(Math.floor((s.bavail * s.bsize) / MB) - 40));
    const run = await runOf(f, 'flood', filler(12), {});
    assert.equal(run.limitHit, 'disk', `${run.status} ${run.outputTail}`);
    assert.match(
      run.outputTail ?? '',
      /colony: killed: only \d+ MB free under the data directory .*, below the floor of/,
    );
    assert.equal(run.signal, 'SIGKILL', 'killed at once, no grace');
    assert.ok(!('f12.bin' in written(f, 'flood')));
  });
});
