import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cgroupsForTests, RunCgroup } from '../../src/runtime/cgroups.js';
import { LIMIT_DEFAULTS } from '../../src/runtime/limits.js';

/**
 * A Colony killed with runs in flight (kill -9, the OOM killer, a power cut) cannot remove their cgroups;
 * their directories — and any process left in them — would stay for good, one more at every crash. The next
 * Colony to make a cgroup sweeps them: a cgroup named after a pid that is gone is emptied and removed, while
 * a live Colony's and anything not named `<label>-<pid>` are left alone. Runs as root, on the host's cgroups,
 * as every confined run here does.
 */
const V2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
const PARENTS = V2 ? ['/sys/fs/cgroup/colony'] : ['/sys/fs/cgroup/pids/colony', '/sys/fs/cgroup/memory/colony'];

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the cgroups of a Colony that is gone', () => {
  it("are emptied and removed by the next one; a live Colony's and foreign ones stay", async () => {
    cgroupsForTests.reset();
    const mine = RunCgroup.create(`sweep-probe-${process.pid}`, LIMIT_DEFAULTS);
    assert.ok(mine, 'this machine lets Colony make cgroups (root): the sweep is tested on real ones');
    mine.remove();

    const dead = spawnSync('true').pid!;
    const stale = `run-7-${dead}`;
    const live = `run-8-${process.pid}`;
    const foreign = `not-colonys-${process.pid}x`;
    for (const parent of PARENTS) for (const name of [stale, live, foreign]) mkdirSync(join(parent, name));
    const orphan = spawn('sleep', ['300'], { stdio: 'ignore' });
    for (const parent of PARENTS) writeFileSync(join(parent, stale, 'cgroup.procs'), String(orphan.pid));
    try {
      cgroupsForTests.reset();
      const next = RunCgroup.create(`run-9-${process.pid}`, LIMIT_DEFAULTS);
      assert.ok(next);
      next.remove();
      await until("the process left in the dead Colony's cgroup is gone", () => orphan.signalCode !== null);
      assert.equal(orphan.signalCode, 'SIGKILL');
      await until('the stale cgroup is removed', () => PARENTS.every((p) => !existsSync(join(p, stale))));
      for (const parent of PARENTS) {
        assert.ok(existsSync(join(parent, live)), `a live Colony's cgroup stays (${parent})`);
        assert.ok(existsSync(join(parent, foreign)), `a cgroup not named <label>-<pid> stays (${parent})`);
      }
    } finally {
      orphan.kill('SIGKILL');
      await until('the orphan is reaped', () => orphan.signalCode !== null || orphan.exitCode !== null);
      for (const parent of PARENTS)
        for (const name of [stale, live, foreign]) if (existsSync(join(parent, name))) rmdirSync(join(parent, name));
    }
  });
});
