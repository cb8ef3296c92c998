import assert from 'node:assert/strict';
import {
  closeSync,
  fstatSync,
  linkSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execFileSync } from 'node:child_process';
import {
  existsNoFollow,
  makeDir,
  openDir,
  openRegular,
  PathRefused,
  readText,
  remove,
  writeText,
} from '../src/beneath.js';
import { adoptTree, sandboxIdentity } from '../src/sandbox-user.js';
import { tempDir } from '../testkit/temp-dir.js';

/**
 * Opening a path an agent can write to: one component at a time from /, never following a symlink, and
 * working on the descriptor. Every refusal names the path and why; nothing is ever read or written through
 * a symlink — neither as the last component nor on the way.
 */
function tree(t: { after(fn: () => void): void }) {
  const scratch = tempDir('colony-beneath-');
  t.after(() => scratch.cleanup());
  const root = realpathSync(scratch.dir);
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  writeFileSync(join(root, 'a', 'b', 'f.txt'), 'inside');
  mkdirSync(join(root, 'outside'));
  writeFileSync(join(root, 'outside', 'secret'), 'SECRET');
  symlinkSync(join(root, 'outside'), join(root, 'a', 'to-outside'));
  symlinkSync(join(root, 'outside', 'secret'), join(root, 'a', 'b', 'link.txt'));
  symlinkSync('b', join(root, 'a', 'inner')); // a symlink that stays inside is refused too
  return root;
}

const reason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof PathRefused) return e.reason;
    throw e;
  }
  return 'ok';
};

describe('beneath: paths opened without following a symlink', () => {
  it('reads a file through real directories; refuses a symlink anywhere on the way, or as the file itself', (t) => {
    const root = tree(t);
    assert.equal(readText(join(root, 'a', 'b', 'f.txt')), 'inside');
    assert.equal(readText(join(root, 'a', 'b', 'nope.txt')), null, 'missing is null');
    assert.equal(
      reason(() => readText(join(root, 'a', 'to-outside', 'secret'))),
      'symlink',
    );
    assert.equal(
      reason(() => readText(join(root, 'a', 'b', 'link.txt'))),
      'symlink',
    );
    assert.equal(
      reason(() => readText(join(root, 'a', 'inner', 'f.txt'))),
      'symlink',
    );
    assert.equal(
      reason(() => openDir(join(root, 'a', 'to-outside'))),
      'symlink',
    );
    assert.equal(
      reason(() => openRegular(join(root, 'a', 'b'))),
      'not_regular',
    );
    assert.equal(
      reason(() => readText('a/b/f.txt')),
      'bad_path',
    );
    assert.equal(
      reason(() => readText(`${root}/a/../a/b/f.txt`)),
      'ok',
      'a normalized path is walked as such',
    );
    assert.equal(existsNoFollow(join(root, 'a', 'b', 'f.txt')), true);
    assert.equal(existsNoFollow(join(root, 'a', 'b', 'link.txt')), false);
  });

  it('a FIFO does not hang the open, and is refused as not a regular file', (t) => {
    const root = tree(t);
    execFileSync('mkfifo', [join(root, 'a', 'pipe')]);
    assert.equal(
      reason(() => readText(join(root, 'a', 'pipe'))),
      'not_regular',
    );
  });

  it('writes, makes and removes only through real directories; nothing lands outside', (t) => {
    const root = tree(t);
    const file = join(root, 'a', 'b', 'new.txt');
    writeText(file, 'made', true);
    assert.throws(() => writeText(file, 'again', true), /EEXIST/, 'create never replaces');
    writeText(file, 'rewritten', false);
    assert.equal(readFileSync(file, 'utf8'), 'rewritten');
    assert.equal(
      reason(() => writeText(join(root, 'a', 'to-outside', 'planted'), 'x', true)),
      'symlink',
    );
    assert.equal(
      reason(() => writeText(join(root, 'a', 'b', 'link.txt'), 'x', false)),
      'symlink',
    );
    assert.equal(readFileSync(join(root, 'outside', 'secret'), 'utf8'), 'SECRET');
    assert.equal(makeDir(join(root, 'a', 'c')), true);
    assert.equal(makeDir(join(root, 'a', 'c')), false, 'there already');
    assert.equal(
      reason(() => makeDir(join(root, 'a', 'to-outside', 'd'))),
      'symlink',
    );
    assert.equal(
      reason(() => makeDir(join(root, 'a', 'to-outside'))),
      'symlink',
    );
    assert.equal(
      reason(() => remove(join(root, 'a', 'to-outside', 'secret'))),
      'symlink',
    );
    remove(file);
    assert.equal(existsNoFollow(file), false);
    assert.equal(readFileSync(join(root, 'outside', 'secret'), 'utf8'), 'SECRET');
  });

  it('gives a tree to the sandbox uid without following a symlink or a hard link (as root)', (t) => {
    const who = sandboxIdentity();
    if (!who.switched) return t.skip('only as root does Colony give files to another uid');
    const root = tree(t);
    const dir = join(root, 'a');
    writeFileSync(join(root, 'outside', 'linked'), "not the agent's");
    linkSync(join(root, 'outside', 'linked'), join(dir, 'b', 'hard'));
    assert.ok(adoptTree(dir) > 0);
    assert.equal(statSync(join(dir, 'b', 'f.txt')).uid, who.uid);
    assert.equal(statSync(dir).uid, who.uid);
    assert.equal(statSync(join(root, 'outside', 'secret')).uid, 0, 'a symlink is not followed');
    assert.equal(statSync(join(root, 'outside')).uid, 0);
    assert.equal(statSync(join(dir, 'b', 'hard')).uid, 0, 'a file with another link is left alone');
    assert.equal(adoptTree(dir), 0, 'a tree already given is left as it is');
    const fd = openDir(dir);
    assert.equal(fstatSync(fd).uid, who.uid);
    closeSync(fd);
  });
});
