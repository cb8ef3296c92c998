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
 *
 * Both ways bin/colony.js runs are held to it: the sources through tsx, and the bundle in dist/cli/
 * (scripts/build-cli.mjs), whose files are read back as the sources each holds (dist/cli/chunks.json).
 * `npm test` builds the bundle first; after editing src/, `npm run build:cli` does.
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

type Way = 'sources' | 'bundle';
const WAYS: Way[] = ['sources', 'bundle'];
const ROOT = join(COLONY_BIN, '..', '..');

/** The sources each file of the bundle holds, once the bundle is known to be the one bin/colony.js runs. */
let chunks: Record<string, string[]> | null = null;
function bundleChunks(): Record<string, string[]> {
  if (chunks) return chunks;
  const probe = spawnSync(process.execPath, ['--import', pathToFileURL(registerHook).href, COLONY_BIN, '--version'], {
    encoding: 'utf8',
    env: { ...process.env, COLONY_TEST_MODULE_LOG: join(scratch.dir, 'probe.txt') },
  });
  assert.equal(probe.status, 0, probe.stderr);
  assert.ok(
    readFileSync(join(scratch.dir, 'probe.txt'), 'utf8').includes('/dist/cli/cli.js'),
    'bin/colony.js runs the bundle: it is current (npm test builds it; after editing src/, run npm run build:cli)',
  );
  return (chunks = JSON.parse(readFileSync(join(ROOT, 'dist', 'cli', 'chunks.json'), 'utf8')));
}

let runs = 0;
/**
 * Runs the real CLI and returns its exit code, stdout and the paths (relative to the checkout) of the
 * modules it loaded — for the bundle, the sources its loaded files hold.
 */
function loadedBy(way: Way, args: readonly string[]): { code: number | null; stdout: string; modules: string[] } {
  const log = join(scratch.dir, `modules-${++runs}.txt`);
  writeFileSync(log, '');
  if (way === 'bundle') writeFileSync(join(scratch.dir, 'probe.txt'), '');
  const held = way === 'bundle' ? bundleChunks() : null;
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(registerHook).href, COLONY_BIN, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      COLONY_DATA: '',
      COLONY_TEST_MODULE_LOG: log,
      COLONY_CLI_SOURCES: way === 'sources' ? '1' : '',
    },
    timeout: 60_000,
  });
  const root = pathToFileURL(ROOT).href;
  const loaded = readFileSync(log, 'utf8')
    .split('\n')
    .filter((u) => u.startsWith(`${root}/`))
    .map((u) => u.slice(root.length + 1));
  if (held) {
    assert.deepEqual(
      loaded.filter((m) => m.startsWith('src/')),
      [],
      'the bundle runs without loading a source',
    );
  }
  const modules = held
    ? loaded.flatMap((m) => (m.startsWith('dist/cli/') ? (held[m.slice('dist/cli/'.length)] ?? [m]) : [m]))
    : loaded;
  return { code: r.status, stdout: r.stdout, modules };
}

const APP = [/^src\/(mcp|http|report|demo|runtime)\//, /^src\/(app|engine|db)\.ts$/, /^bench\//];
const PACKAGES = [/^node_modules\/(better-sqlite3|@modelcontextprotocol|express|zod)\//];
const SERVING = [/^src\/(mcp|http)\//, /^node_modules\/(@modelcontextprotocol|express)\//];
/**
 * What a command on the SQLite store never needs: node-postgres (only a PostgreSQL store connects), and
 * rxjs's index, which loads every operator for the bus's one Subject.
 */
const NOT_ON_SQLITE = [/^node_modules\/pg\//, /^node_modules\/rxjs\/dist\/cjs\/index\.js$/];

function assertNone(modules: string[], patterns: RegExp[], what: string): void {
  const heavy = modules.filter((m) => patterns.some((p) => p.test(m)));
  assert.deepEqual(heavy, [], `${what} loaded ${heavy.length} heavy modules (import them inside the action instead)`);
}

describe('colony startup', () => {
  for (const way of WAYS)
    it(`${way}: --help, and a command's --help, load none of the app, the store or the MCP SDK`, () => {
      for (const args of [
        ['--help'],
        ['agents', 'create', '--help'],
        ['secrets', 'set', '--help'],
        ['serve', '--help'],
        ['demo', '--help'],
      ]) {
        const r = loadedBy(way, args);
        assert.equal(r.code, 0, args.join(' '));
        assert.match(r.stdout, /^Usage: colony/);
        assert.ok(r.modules.includes('src/cli.ts'), 'the hook sees the CLI modules');
        assertNone(r.modules, [...APP, ...PACKAGES], `colony ${args.join(' ')}`);
      }
    });

  for (const way of WAYS)
    it(`${way}: init and verify open the store without loading MCP, HTTP or node-postgres`, () => {
      const dir = join(scratch.dir, `data-${way}`);
      const init = loadedBy(way, ['init', '--data', dir]);
      assert.equal(init.code, 0);
      assert.ok(init.modules.includes('src/app.ts'), 'init opens the app');
      assertNone(init.modules, [...SERVING, ...NOT_ON_SQLITE], 'colony init');
      const verify = loadedBy(way, ['verify', '--data', dir]);
      assert.equal(verify.code, 0);
      assert.match(verify.stdout, /^ok: \d+ events/);
      assert.ok(
        verify.modules.some((m) => m.startsWith('node_modules/better-sqlite3/')),
        'the hook sees better-sqlite3 when it is loaded',
      );
      assertNone(
        verify.modules,
        [...SERVING, ...NOT_ON_SQLITE, /^node_modules\/zod\//, /^src\/(app|report|demo)/],
        'colony verify',
      );
    });
});
