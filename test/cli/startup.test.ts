import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { COLONY_BIN } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The CLI starts fast: defining the commands (and printing any --help) loads none of the app, and each
 * action loads only what it uses. The demo runs `colony <cmd> --help` dozens of times and the tests spawn
 * the CLI hundreds of times. A module loader hook records every module the real bin/colony.js loads
 * (ES modules and the CommonJS packages they import; not what those packages require() internally).
 */
const scratch = tempDir('colony-startup-');
after(() => scratch.cleanup());

let registerHook = '';
before(() => {
  const hooks = join(scratch.dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    [
      "import { appendFileSync } from 'node:fs';",
      'let out;',
      'export function initialize(data) { out = data.out; }',
      'export async function load(url, context, next) { appendFileSync(out, `${url}\\n`); return next(url, context); }',
    ].join('\n'),
  );
  registerHook = join(scratch.dir, 'register.mjs');
  writeFileSync(
    registerHook,
    [
      "import { register } from 'node:module';",
      `register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { out: process.env.COLONY_TEST_MODULE_LOG } });`,
    ].join('\n'),
  );
});

let runs = 0;
/** Runs the real CLI and returns its exit code, stdout and the paths (relative to the checkout) of the modules it loaded. */
function loadedBy(args: readonly string[]): { code: number | null; stdout: string; modules: string[] } {
  const log = join(scratch.dir, `modules-${++runs}.txt`);
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(registerHook).href, COLONY_BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, COLONY_DATA: '', COLONY_TEST_MODULE_LOG: log },
    timeout: 60_000,
  });
  const root = pathToFileURL(join(COLONY_BIN, '..', '..')).href;
  const modules = readFileSync(log, 'utf8')
    .split('\n')
    .filter((u) => u.startsWith(`${root}/`))
    .map((u) => u.slice(root.length + 1));
  return { code: r.status, stdout: r.stdout, modules };
}

const APP = [/^src\/(mcp|http|report|demo|runtime)\//, /^src\/(app|engine|db)\.ts$/, /^bench\//];
const PACKAGES = [/^node_modules\/(better-sqlite3|@modelcontextprotocol|express|zod)\//];
const SERVING = [/^src\/(mcp|http)\//, /^node_modules\/(@modelcontextprotocol|express)\//];

function assertNone(modules: string[], patterns: RegExp[], what: string): void {
  const heavy = modules.filter((m) => patterns.some((p) => p.test(m)));
  assert.deepEqual(heavy, [], `${what} loaded ${heavy.length} heavy modules (import them inside the action instead)`);
}

describe('colony startup', () => {
  it("--help, and a command's --help, load none of the app, the store or the MCP SDK", () => {
    for (const args of [
      ['--help'],
      ['agents', 'create', '--help'],
      ['secrets', 'set', '--help'],
      ['serve', '--help'],
      ['demo', '--help'],
    ]) {
      const r = loadedBy(args);
      assert.equal(r.code, 0, args.join(' '));
      assert.match(r.stdout, /^Usage: colony/);
      assert.ok(r.modules.includes('src/cli.ts'), 'the hook sees the CLI modules');
      assertNone(r.modules, [...APP, ...PACKAGES], `colony ${args.join(' ')}`);
    }
  });

  it('init and verify open the store without loading MCP or HTTP', () => {
    const dir = join(scratch.dir, 'data');
    const init = loadedBy(['init', '--data', dir]);
    assert.equal(init.code, 0);
    assert.ok(init.modules.includes('src/app.ts'), 'init opens the app');
    assertNone(init.modules, SERVING, 'colony init');
    const verify = loadedBy(['verify', '--data', dir]);
    assert.equal(verify.code, 0);
    assert.match(verify.stdout, /^ok: \d+ events/);
    assert.ok(
      verify.modules.some((m) => m.startsWith('node_modules/better-sqlite3/')),
      'the hook sees better-sqlite3 when it is loaded',
    );
    assertNone(verify.modules, [...SERVING, /^node_modules\/zod\//, /^src\/(app|report|demo)/], 'colony verify');
  });
});
