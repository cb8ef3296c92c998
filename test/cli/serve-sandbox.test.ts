import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { colony, colonyLive } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `colony serve --sandbox` through the real CLI: opting out of confinement is never silent —
 * serve announces it at start — and a value other than on/off is refused before anything starts.
 */
describe('colony serve --sandbox', () => {
  it('announces how agent processes will run; --sandbox off says UNCONFINED; a bad value is one line', async (t) => {
    const scratch = tempDir('colony-cli-sandbox-');
    t.after(() => scratch.cleanup());
    const bad = colony(['serve', '--sandbox', 'maybe', '--port', '0', '--data', scratch.dir]);
    assert.deepEqual([bad.code, bad.stderr], [1, 'colony: --sandbox must be on or off, not "maybe"\n']);
    for (const [flag, said] of [
      ['on', /run confined \(bubblewrap\)/],
      ['off', /^WARNING: --sandbox off: agent runs and command verifiers run UNCONFINED/],
    ] as const) {
      const serve = colonyLive(['serve', '--sandbox', flag, '--port', '0', '--data', scratch.dir]);
      try {
        await serve.waitFor(said, 'stderr');
        await serve.waitFor(/^Colony listening on /, 'stderr');
      } finally {
        await serve.stop();
      }
    }
  });
});
