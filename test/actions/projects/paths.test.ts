import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DomainError } from '../../../src/errors.js';
import { isPathField, PathPolicy, realResolve } from '../../../src/actions/projects/paths.js';
import { tempDir } from '../../../testkit/temp-dir.js';

/** The path policy on its own: what counts as a path, and what resolves inside the roots. */
const scratch = tempDir('colony-paths-');
after(() => scratch.cleanup());
const root = join(scratch.dir, 'root');
const outside = join(scratch.dir, 'outside');
mkdirSync(join(root, 'sub'), { recursive: true });
mkdirSync(outside, { recursive: true });
writeFileSync(join(outside, 'secret.txt'), 'no');
symlinkSync(outside, join(root, 'link-out'));
symlinkSync(join(root, 'sub'), join(root, 'link-in'));
const policy = new PathPolicy(() => [root]);

const refuses = (args: Record<string, unknown>, code: string, field: string) => {
  assert.throws(
    () => policy.guard(args),
    (e: unknown) => e instanceof DomainError && e.code === code && e.details?.field === field,
    JSON.stringify(args),
  );
};

describe('path policy', () => {
  it('knows path-like argument names', () => {
    for (const name of ['path', 'cwd', 'files', 'target_path', 'output_dir', 'work_directory'])
      assert.ok(isPathField(name), name);
    for (const name of ['title', 'pathname', 'directions', 'reason']) assert.ok(!isPathField(name), name);
  });

  it('accepts paths inside a root, relative segments included, and returns them resolved', () => {
    assert.deepEqual(policy.guard({ path: join(root, 'sub', '..', 'sub', 'new.txt'), title: '../not a path' }), {
      path: join(root, 'sub', 'new.txt'),
      title: '../not a path',
    });
    assert.deepEqual(
      policy.guard({ cwd: join(root, 'link-in') }),
      { cwd: join(root, 'sub') },
      'symlinks inside stay inside',
    );
    assert.deepEqual(policy.guard({ path: root }), { path: root });
  });

  it('refuses .. escapes, absolute paths outside, and symlinks pointing out', () => {
    refuses({ path: join(root, '..', 'outside', 'secret.txt') }, 'ErrPathOutsideRoots', 'path');
    refuses({ path: '/etc/passwd' }, 'ErrPathOutsideRoots', 'path');
    refuses({ file_path: join(root, 'link-out', 'secret.txt') }, 'ErrPathOutsideRoots', 'file_path');
    refuses({ output_dir: join(root, 'link-out', 'not-yet', 'deeper') }, 'ErrPathOutsideRoots', 'output_dir');
    refuses({ path: `${root}-sibling/x` }, 'ErrPathOutsideRoots', 'path');
  });

  it('refuses empty strings and non-strings', () => {
    refuses({ path: '' }, 'ErrInvalidInput', 'path');
    refuses({ path: '   ' }, 'ErrInvalidInput', 'path');
    refuses({ cwd: 42 }, 'ErrInvalidInput', 'cwd');
  });

  it('checks every item of a list, naming the bad one', () => {
    assert.deepEqual(policy.guard({ files: [join(root, 'a'), join(root, 'sub', 'b')] }), {
      files: [join(root, 'a'), join(root, 'sub', 'b')],
    });
    refuses({ files: [join(root, 'a'), '/tmp/../etc/x'] }, 'ErrPathOutsideRoots', 'files[1]');
    refuses({ files: [join(root, 'a'), ''] }, 'ErrInvalidInput', 'files[1]');
  });

  it('guards fields a tool declares even when their names do not look like paths', () => {
    assert.throws(() => policy.guard({ target: '/etc' }, ['target']), { code: 'ErrPathOutsideRoots' });
    assert.deepEqual(policy.guard({ target: '/etc' }), { target: '/etc' });
  });

  it('resolves roots themselves, so a root given through a symlink still matches', () => {
    const viaLink = new PathPolicy(() => [join(root, 'link-in')]);
    assert.deepEqual(viaLink.guard({ path: join(root, 'sub', 'x') }), { path: join(root, 'sub', 'x') });
    assert.equal(realResolve(join(root, 'link-in', 'later', 'file')), join(root, 'sub', 'later', 'file'));
  });

  it('takes roots from the data dir workspace and COLONY_ALLOWED_ROOTS', () => {
    const fromEnv = PathPolicy.forDataDir(join(scratch.dir, 'data'), () => [], {
      COLONY_ALLOWED_ROOTS: `${root}:${outside}`,
    });
    assert.deepEqual(fromEnv.allowedRoots(), [join(scratch.dir, 'data', 'workspace'), root, outside]);
  });
});
