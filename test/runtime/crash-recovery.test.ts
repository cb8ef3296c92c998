import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { colony, colonyLive } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * Kill -9 of `colony serve` during runs — a crash loses no committed fact: after a restart no run stays
 * `running` (the one the crash cut is marked failed), the queued run is resumed, and `colony verify`
 * passes. Runs are queued by the CLI — another process — so the serving reactor finds them in the log.
 */
type RunJson = { run_id: number; status: string; reason: string | null; source: string };

it('after kill -9 of serve: the cut run is failed, the queued one runs, the chain verifies', async (t) => {
  const scratch = tempDir('colony-crash-runs-');
  t.after(() => scratch.cleanup());
  const dir = scratch.dir;
  const data = ['--data', dir];
  assert.equal(colony(['init', ...data]).code, 0);
  const prompt = join(dir, 'prompt.md');
  writeFileSync(prompt, 'You sleep on your first run and answer at once after that.');
  // Run 1 sleeps (and says where it is, so the test can clean up the orphan); later runs end at once.
  const command = `cat >/dev/null; echo $$ > pid-$COLONY_RUN_ID; if [ "$COLONY_RUN_ID" = 1 ]; then exec sleep 60; fi; echo done`;
  assert.equal(
    colony([
      'agents',
      'create',
      'sleeper',
      '--model',
      'm',
      '--prompt-file',
      prompt,
      '--tools',
      'whoami',
      '--command',
      command,
      ...data,
    ]).code,
    0,
  );
  assert.equal(colony(['agents', 'runtime', 'sleeper', '--cooldown-sec', '0', ...data]).code, 0);
  const cwd = join(dir, 'workspace', 'agents', 'sleeper');
  t.after(() => {
    if (existsSync(join(cwd, 'pid-1')))
      try {
        process.kill(Number(readFileSync(join(cwd, 'pid-1'), 'utf8')), 'SIGKILL');
      } catch {
        /* gone */
      }
  });
  const runs = () => JSON.parse(colony(['runs', 'list', '--json', ...data]).stdout) as RunJson[];

  const first = colonyLive(['serve', '--port', '0', ...data]);
  await first.waitFor(/Colony listening/, 'stderr');
  assert.equal(colony(['agents', 'wake', 'sleeper', ...data]).code, 0);
  await until(() => runs().some((r) => r.run_id === 1 && r.status === 'running'));
  assert.match(
    colony(['agents', 'wake', 'sleeper', '--prompt', 'second', ...data]).stdout,
    /Queued run 2 of sleeper \(waits: agent_running\)/,
  );
  first.proc.kill('SIGKILL');
  await first.stop();
  assert.deepEqual(
    runs().map((r) => [r.run_id, r.status]),
    [
      [2, 'queued'],
      [1, 'running'],
    ],
  );

  const second = colonyLive(['serve', '--port', '0', ...data]);
  t.after(() => second.stop());
  await second.waitFor(/Colony listening/, 'stderr');
  await until(() => runs().find((r) => r.run_id === 2)?.status === 'succeeded');
  const after = runs();
  assert.equal(after.find((r) => r.run_id === 1)?.status, 'failed');
  assert.match(after.find((r) => r.run_id === 1)?.reason ?? '', /Colony stopped while this run was in progress/);
  assert.ok(after.every((r) => r.status !== 'running'));
  assert.equal(await second.stop(), 0);
  const verify = colony(['verify', ...data]);
  assert.equal(verify.code, 0, verify.stderr);
  assert.match(verify.stdout, /^ok: /);
});

async function until(check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}
