import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { colony } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/** `colony agents update`: a config change gives a new hash seeded at 70 %; a tier change keeps it; bad options write nothing. */
describe('colony agents update', () => {
  it('changes the config, reports the hash change, and refuses bad options with one line', (t) => {
    const { dir, cleanup } = tempDir();
    t.after(cleanup);
    const run = (...args: string[]) => colony([...args, '--data', dir]);
    assert.equal(run('init').code, 0);
    writeFileSync(join(dir, 'prompt.txt'), 'You are a careful scanner of documentation pages.');
    assert.equal(
      run(
        'agents',
        'create',
        'scanner',
        '--model',
        'm1',
        '--prompt-file',
        join(dir, 'prompt.txt'),
        '--tools',
        'my_status',
      ).code,
      0,
    );
    const show = () =>
      JSON.parse(run('agents', 'show', 'scanner', '--json').stdout) as {
        config_hash: string;
        model: string;
        autonomy_tier: string;
        reputation: { rolling_score: number };
      };
    const before = show();
    const changed = JSON.parse(run('agents', 'update', 'scanner', '--model', 'm2', '--json').stdout) as {
      config_hash: string;
      previous_hash: string;
      hash_changed: boolean;
    };
    assert.deepEqual([changed.previous_hash, changed.hash_changed], [before.config_hash, true]);
    const after = show();
    assert.equal(after.config_hash, changed.config_hash);
    assert.equal(after.model, 'm2');
    assert.ok(Math.abs(after.reputation.rolling_score - 0.35) < 0.01, `0.7 × 0.5: ${after.reputation.rolling_score}`);
    const tier = JSON.parse(run('agents', 'update', 'scanner', '--tier', 'assisted', '--json').stdout) as {
      hash_changed: boolean;
    };
    assert.equal(tier.hash_changed, false);
    assert.equal(show().autonomy_tier, 'assisted');
    for (const [args, pattern] of [
      [['agents', 'update', 'scanner'], /nothing to change/],
      [['agents', 'update', 'scanner', '--tier', 'boss'], /--tier must be one of/],
      [['agents', 'update', 'scanner', '--tools', ' , '], /--tools must name at least one tool/],
      [['agents', 'update', 'nobody', '--model', 'm3'], /agent nobody not found/],
    ] as const) {
      const r = run(...args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, pattern);
    }
    assert.equal(show().config_hash, changed.config_hash, 'nothing changed');
  });
});
