import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { colony } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * A malformed master key stops Colony with one clear line and is never overwritten —
 * the secrets sealed under the real key would otherwise be lost for good.
 */
describe('a malformed master key', () => {
  for (const [label, bytes] of [
    ['too short', Buffer.from('short-key')],
    ['too long', Buffer.alloc(33, 7)],
    ['empty', Buffer.alloc(0)],
  ] as const) {
    it(`(${label}) stops serve and secrets set with one line naming the file, and the file stays as it was`, (t) => {
      const { dir, cleanup } = tempDir();
      t.after(cleanup);
      assert.equal(colony(['init', '--data', dir]).code, 0);
      const key = join(dir, 'secrets.key');
      writeFileSync(key, bytes);
      for (const args of [
        ['serve', '--port', '0'],
        ['secrets', 'set', 'API_KEY', 'value-1', '--scope', 'user:owner'],
      ]) {
        const r = colony([...args, '--data', dir]);
        assert.notEqual(r.code, 0, `${args[0]} must not start`);
        const lines = r.stderr.trim().split('\n');
        assert.equal(lines.length, 1, r.stderr);
        assert.match(
          lines[0]!,
          new RegExp(
            `^colony: ${key.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is malformed \\(${bytes.length} bytes, expected 32\\); it was left untouched`,
          ),
        );
        assert.deepEqual(readFileSync(key), bytes, 'never overwritten');
      }
    });
  }
});
