import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { COLONY_BIN } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * bin/colony.js runs the bundle in dist/cli/ only while it was built from exactly the sources now in
 * src/ (dist/cli/inputs.json: each file's size and mtime); otherwise, and when COLONY_CLI_SOURCES=1, the
 * sources through tsx. Checked on a checkout of its own: the real launcher, a bundle and sources that
 * each say which ran, and the real node_modules (for tsx).
 */
const scratch = tempDir('colony-launcher-');
after(() => scratch.cleanup());
const repo = join(scratch.dir, 'repo');
const file = (path: string) => join(repo, path);

/** Lists the sources as the build does: path, size, mtime. */
function recordInputs(paths: string[]): void {
  const inputs = paths.map((p) => {
    const s = statSync(file(p));
    return [p, s.size, s.mtimeMs];
  });
  writeFileSync(file('dist/cli/inputs.json'), JSON.stringify(inputs));
}

function ran(env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(process.execPath, [file('bin/colony.js')], {
    encoding: 'utf8',
    env: { ...process.env, COLONY_CLI_SOURCES: '', ...env },
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

before(() => {
  for (const dir of ['bin', 'src/lib', 'dist/cli']) mkdirSync(file(dir), { recursive: true });
  copyFileSync(COLONY_BIN, file('bin/colony.js'));
  symlinkSync(join(COLONY_BIN, '..', '..', 'node_modules'), file('node_modules'));
  writeFileSync(file('package.json'), '{"type":"module"}');
  writeFileSync(file('src/cli.ts'), "import { name } from './lib/name.ts';\nconsole.log(name satisfies string);\n");
  writeFileSync(file('src/lib/name.ts'), "export const name = 'sources';\n");
  writeFileSync(file('dist/cli/cli.js'), "console.log('bundle');\n");
});

describe('bin/colony.js: the bundle or the sources', () => {
  it('runs the bundle while every source it was built from is as it was', () => {
    recordInputs(['src/cli.ts', 'src/lib/name.ts']);
    assert.equal(ran(), 'bundle');
  });

  it('runs the sources once one of them was touched, and the bundle again when it is as recorded', () => {
    // A whole second, so that setting it back restores it exactly (a Date has no sub-millisecond part).
    const mtime = new Date('2026-01-01T00:00:00Z');
    utimesSync(file('src/lib/name.ts'), mtime, mtime);
    recordInputs(['src/cli.ts', 'src/lib/name.ts']);
    utimesSync(file('src/lib/name.ts'), mtime, new Date(mtime.getTime() + 2000));
    assert.equal(ran(), 'sources');
    utimesSync(file('src/lib/name.ts'), mtime, mtime);
    assert.equal(ran(), 'bundle');
  });

  it('runs the sources when one changed size behind an unchanged mtime', () => {
    const mtime = new Date('2026-01-01T00:00:00Z');
    utimesSync(file('src/lib/name.ts'), mtime, mtime);
    recordInputs(['src/cli.ts', 'src/lib/name.ts']);
    assert.equal(ran(), 'bundle');
    appendFileSync(file('src/lib/name.ts'), '// edited\n');
    utimesSync(file('src/lib/name.ts'), mtime, mtime);
    assert.equal(ran(), 'sources');
  });

  it('runs the sources when a source of the bundle is gone, or the list is unreadable', () => {
    writeFileSync(file('src/lib/gone.ts'), 'export {};\n');
    recordInputs(['src/cli.ts', 'src/lib/name.ts', 'src/lib/gone.ts']);
    assert.equal(ran(), 'bundle');
    rmSync(file('src/lib/gone.ts'));
    assert.equal(ran(), 'sources');
    writeFileSync(file('dist/cli/inputs.json'), '{not json');
    assert.equal(ran(), 'sources');
    rmSync(file('dist/cli/inputs.json'));
    assert.equal(ran(), 'sources');
  });

  it('runs the sources when COLONY_CLI_SOURCES=1, however current the bundle', () => {
    recordInputs(['src/cli.ts', 'src/lib/name.ts']);
    assert.equal(ran(), 'bundle');
    assert.equal(ran({ COLONY_CLI_SOURCES: '1' }), 'sources');
  });
});
