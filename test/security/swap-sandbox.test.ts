import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createProject } from '../../src/actions/projects.js';
import { decideProposal } from '../../src/actions/proposals.js';
import { speakerOf } from '../../src/actions/principals.js';
import { setAgentProject } from '../../src/actions/runs/agent-controls.js';
import { readAll } from '../../src/engine/store.js';
import { getRun } from '../../src/projections/run-queries.js';
import { callTool, textOf } from '../helpers/mcp.js';
import { ok } from '../helpers/calls.js';
import { runtimeFixture, type RuntimeFixture } from '../helpers/runtime.js';
import { startSwapping } from '../helpers/swapper.js';

/**
 * Issue 31, items 2 and 6, through the real reactor, verifier and sandbox: the directory a confined process
 * works in is opened once without following a symlink and mounted through that descriptor, and a command
 * verifier runs where its recipe or the checked work says, read-only — never where an agent points it.
 * The attacks: an agent swaps a directory it can write to with a symlink to Colony's data directory in a
 * tight loop while (1) the owner's recipe verifies the agent's tasks there and (2) another agent's run
 * starts in a project directory that lies in the attacker's workspace. Either would list the keys and
 * write into the data directory.
 */
delete process.env.COLONY_ALLOWED_ROOTS;
const actor = { actor: 'user:owner' };
/** What an attacker wants from a process Colony starts in the swapped directory. */
const LOOT = 'ls -a; echo pwned > pwned.txt && echo WROTE';

/** A directory in the worker's own workspace and a symlink to the data dir beside it, to swap. */
function swapPair(f: RuntimeFixture, name: string): { dir: string; link: string } {
  const dir = join(realpathSync(join(f.app.dataDir, 'workspace')), 'agents', 'worker', name);
  mkdirSync(dir, { recursive: true });
  symlinkSync(f.app.dataDir, `${dir}-link`);
  return { dir, link: `${dir}-link` };
}

const verdictsOf = (f: RuntimeFixture) =>
  readAll(f.app.engine.db, { limit: 10_000 })
    .filter((e) => e.type === 'TaskVerified')
    .map((e) => e.data as { verdict: string; output: string; reason: string });

/** This process's verifier cgroups still on the host (v2 or v1 layout; none when Colony may make none). */
const leftCgroups = (): string[] =>
  ['/sys/fs/cgroup/colony', '/sys/fs/cgroup/pids/colony', '/sys/fs/cgroup/memory/colony'].flatMap((root) =>
    existsSync(root) ? readdirSync(root).filter((n) => n.startsWith('verify-') && n.endsWith(`-${process.pid}`)) : [],
  );

function assertDataDirUntouched(f: RuntimeFixture, outputs: readonly string[]): void {
  assert.ok(!existsSync(join(f.app.dataDir, 'pwned.txt')), 'nothing was written into the data directory');
  for (const out of outputs)
    assert.doesNotMatch(out, /secrets\.key|colony\.db|signing\.key/, `the data directory was listed: ${out}`);
}

describe('directories an agent swaps while Colony starts a confined process there', () => {
  it("a command verifier never runs in the data directory, nor where an agent's tree points", async (t) => {
    const f = await runtimeFixture({ agentTools: ['create_goal', 'propose_task_tree'] });
    t.after(() => f.close());
    const owner = await f.connect(f.ownerToken);
    const worker = await f.connect(f.agentToken);
    const { dir, link } = swapPair(f, 'checked');
    await ok(owner, 'add_verifier', { name: 'loot', command: LOOT, timeout_sec: 20 });
    const goal = await ok(worker, 'create_goal', {
      title: 'Checked work',
      description: 'Leaves checked by the owner recipe.',
      coordinator_config: 'worker',
    });
    const leaves = Array.from({ length: 3 }, (_, i) => ({
      title: `Leaf ${i}`,
      description: 'Checked where the worker says.',
      verifier_config: { kind: 'command', recipe: 'loot', cwd: dir },
    }));
    const tree = (verifierCwd: boolean) => ({
      title: 'Root',
      description: 'Three checked leaves.',
      children: verifierCwd
        ? leaves
        : leaves.map(({ verifier_config, ...l }) => ({
            ...l,
            verifier_config: { kind: verifier_config.kind, recipe: verifier_config.recipe },
          })),
    });
    // Item 6: an agent's tree cannot choose where the owner's recipe runs; nothing is written.
    const head = f.app.engine.head().position;
    const chosen = await callTool(worker, 'propose_task_tree', { goal_id: goal.goal_id, tree: tree(true) });
    const refusedChoice = chosen.result.isError === true;
    if (refusedChoice) {
      assert.match(textOf(chosen.result), /^ErrVerifierCwdNotAllowed: /);
      assert.equal(f.app.engine.head().position, head);
    }
    const proposed = refusedChoice
      ? await ok(worker, 'propose_task_tree', { goal_id: goal.goal_id, tree: tree(false) })
      : chosen.body;
    const { taskIds } = decideProposal(
      f.app,
      speakerOf(f.app, `user-${f.ownerId}`),
      proposed.proposal_id as number,
      'approve',
      '',
      actor,
    );
    // The assignees' project is the swapped directory, so an unchosen verifier runs there (read-only).
    createProject(
      f.app,
      speakerOf(f.app, `user-${f.ownerId}`),
      { name: 'checked', path: dir, gitUrl: '', description: '' },
      actor,
    );

    const swapper = await startSwapping(dir, link);
    try {
      // Three assignees, one task each (a rejected verdict quarantines its assignee), all working in the project.
      for (const [i, id] of taskIds.slice(1).entries()) {
        const w = f.addRunner(`checker-${i}`, 'true', {}, { toolScope: ['claim_task', 'complete_task'] });
        setAgentProject(f.app, f.ownerId, w.agentId, 'checked', 'owner', actor);
        const client = await f.connect(w.token);
        await ok(client, 'claim_task', { task_id: id });
        await ok(client, 'complete_task', { task_id: id, summary: 'done, check it' });
      }
      for (let i = 0; i < 200 && verdictsOf(f).length < 3; i++) await new Promise((r) => setTimeout(r, 100));
      await f.runtime.verifier.idle();
    } finally {
      await swapper.stop();
    }
    const verdicts = verdictsOf(f);
    assert.equal(verdicts.length, 3, 'every hand-in got a verdict: none waits on nothing');
    assertDataDirUntouched(
      f,
      verdicts.map((v) => `${v.output}\n${v.reason}`),
    );
    // Whatever a verifier ran into, nothing of it stays behind: its cgroup goes (item 12).
    for (let i = 0; i < 60 && leftCgroups().length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(leftCgroups(), []);
    for (const v of verdicts) {
      assert.equal(v.verdict, 'reject', `read-only or refused, the recipe's write fails: ${v.reason}`);
      assert.doesNotMatch(v.output, /WROTE/);
    }
  });

  it("an agent's run never starts in the data directory when its project directory is swapped", async (t) => {
    const f = await runtimeFixture();
    t.after(() => f.close());
    const { dir, link } = swapPair(f, 'shared');
    createProject(
      f.app,
      speakerOf(f.app, `user-${f.ownerId}`),
      { name: 'shared', path: dir, gitUrl: '', description: '' },
      actor,
    );
    const bob = f.addRunner('bob', `cat >/dev/null; ${LOOT}`, { timeoutSec: 20 });
    setAgentProject(f.app, f.ownerId, bob.agentId, 'shared', 'owner', actor);
    const outputs: string[] = [];
    const swapper = await startSwapping(dir, link);
    try {
      for (let i = 0; i < 12; i++) {
        const { run } = f.reactor.wake({ agentId: bob.agentId, source: 'manual', by: `user-${f.ownerId}` });
        const done = await f.reactor.whenDone(run.runId);
        const row = getRun(f.app.engine.db, done.runId)!;
        outputs.push(`${row.outputTail ?? ''}\n${row.reason ?? ''}`);
      }
    } finally {
      await swapper.stop();
    }
    assertDataDirUntouched(f, outputs);
  });
});
