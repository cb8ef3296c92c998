import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { it } from 'node:test';

/**
 * CI installs with `npm ci`, which refuses a lock missing any platform package a locked package names
 * (opencode-ai's builds for other systems). `npm install` on a machine whose registry does not serve them
 * leaves them out; this fails here, with the fix, instead of in CI.
 */
it('package-lock.json names every platform package npm ci will ask for', () => {
  const r = spawnSync(process.execPath, ['tools/lock-platforms.mjs', '--check'], { encoding: 'utf8' });
  assert.equal(
    r.status,
    0,
    `package-lock.json lacks these (npm ci would refuse it); run node tools/lock-platforms.mjs:\n${r.stdout}${r.stderr}`,
  );
});
