import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runBounded, type BoundedResult } from '../helpers/bounded.js';
import { COLONY_BIN, colony, colonyLive, type LiveCli } from '../helpers/cli.js';

/**
 * A real third-party client against the real CLI: the MCP Inspector's CLI mode
 * (@modelcontextprotocol/inspector 2.12.0) talks to `colony stdio` (a child it spawns itself) and to
 * `colony serve` over Streamable HTTP with a bearer header. Every Inspector run has no stdin, its own
 * HOME (it keeps a catalog and OAuth state there) and a hard time limit; `--stored-auth-only` stops it
 * from ever starting an interactive OAuth login.
 *
 * The Inspector's exit codes: 0 ok, 3 auth_required, 5 the tool answered isError.
 */
const PKG = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/inspector/package.json', import.meta.url));
const INSPECTOR_BIN = join(
  dirname(PKG),
  (JSON.parse(readFileSync(PKG, 'utf8')) as { bin: Record<string, string> }).bin.inspector!,
);

/** The identity tools every owner sees; other domains add theirs beside them. */
const TOOLS = ['list_tokens', 'revoke_token', 'whoami'];

interface ListedTool {
  name: string;
  title?: string;
  annotations?: Record<string, unknown>;
  inputSchema: Record<string, unknown>;
}

let root: string;
let data: string;
let token: string;
let server: LiveCli | undefined;
let mcpUrl: string;

function inspector(
  target: readonly string[],
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<BoundedResult> {
  return runBounded(
    process.execPath,
    [
      INSPECTOR_BIN,
      '--cli',
      '--format',
      'json',
      '--stored-auth-only',
      '--connect-timeout',
      '10000',
      ...args,
      '--',
      ...target,
    ],
    {
      env: {
        ...process.env,
        HOME: join(root, 'home'),
        MCP_CATALOG_PATH: join(root, 'home', 'mcp.json'),
        MCP_CLIENT_CONFIG_PATH: join(root, 'home', 'client.json'),
        COLONY_DATA: '',
        ...env,
      },
      timeoutMs: 30_000,
    },
  );
}

const stdioTarget = (): string[] => [process.execPath, COLONY_BIN, 'stdio', '--data', data];
const stdioArgs = (): string[] => ['-e', `COLONY_TOKEN=${token}`];
const httpArgs = (): string[] => ['--header', `Authorization: Bearer ${token}`];

function json(r: BoundedResult): { result?: Record<string, unknown>; error?: { code: string; message: string } } {
  const text = r.stdout.trim() || r.stderr.trim().split('\n').at(-1) || '';
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(
      `inspector printed no JSON (exit ${r.code}, ${r.ms} ms${r.timedOut ? ', timed out' : ''})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`,
    );
  }
}

function expectExit(r: BoundedResult, code: number): void {
  assert.equal(r.timedOut, false, `the inspector timed out; stderr: ${r.stderr}`);
  assert.equal(r.code, code, `exit ${r.code}, expected ${code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

function checkList(r: BoundedResult): void {
  expectExit(r, 0);
  const tools = (json(r).result as { tools: ListedTool[] }).tools;
  const names = tools.map((t) => t.name);
  for (const name of TOOLS) assert.ok(names.includes(name), `${name} missing from ${names.join(', ')}`);
  assert.equal(new Set(names).size, names.length, 'tool names are unique');
  for (const t of tools) {
    // Every tool states all four hints explicitly (its trust class), never leaving a client to guess.
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
      assert.equal(typeof t.annotations?.[hint], 'boolean', `${t.name}.${hint}`);
    assert.equal(typeof t.annotations?.title, 'string', `${t.name} has a title annotation`);
  }
  const by = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.deepEqual(by.whoami!.annotations, {
    title: 'Who am I',
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  });
  assert.deepEqual(by.list_tokens!.annotations, {
    title: 'List tokens',
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  });
  assert.deepEqual(by.revoke_token!.annotations, {
    title: 'Revoke a token',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  });
  assert.equal(by.whoami!.inputSchema.additionalProperties, false, 'whoami takes no unknown keys');
  assert.ok(
    (by.revoke_token!.inputSchema.properties as Record<string, unknown>).confirmation_token,
    'destructive tools advertise confirmation_token',
  );
}

function checkWhoami(r: BoundedResult): void {
  expectExit(r, 0);
  const result = json(r).result as {
    structuredContent: Record<string, unknown>;
    content: { type: string; text: string }[];
    isError?: boolean;
  };
  assert.notEqual(result.isError, true);
  assert.deepEqual(result.structuredContent, {
    kind: 'owner',
    id: 1,
    name: 'owner',
    token_id: 1,
    scopes: ['mcp', 'api'],
    tool_scope: null,
    quarantined: false,
  });
  assert.deepEqual(JSON.parse(result.content[0]!.text), result.structuredContent);
}

function checkIsError(r: BoundedResult): void {
  expectExit(r, 5);
  const result = json(r).result as {
    isError: boolean;
    content: { text: string }[];
    structuredContent: { error: { code: string } };
  };
  assert.equal(result.isError, true);
  assert.match(result.content[0]!.text, /^ErrInvalidInput: .*Unrecognized key: "x"/);
  assert.equal(result.structuredContent.error.code, 'ErrInvalidInput');
  assert.match(r.stderr, /tool_is_error/);
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'colony-inspector-'));
  mkdirSync(join(root, 'home'));
  data = join(root, 'data');
  const init = colony(['init', '--data', data, '--json']);
  assert.equal(init.code, 0, init.stderr);
  token = (JSON.parse(init.stdout) as { token: string }).token;
  server = colonyLive(['serve', '--data', data, '--port', '0']);
  const line = await server.waitFor(/Colony listening on http:\/\/\S+/, 'stderr');
  mcpUrl = `${/Colony listening on (http:\/\/\S+)/.exec(line)![1]}/mcp`;
});

after(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('MCP Inspector CLI → colony stdio', () => {
  test('tools/list shows the identity tools with their annotations', async () => {
    checkList(await inspector(stdioTarget(), [...stdioArgs(), '--method', 'tools/list']));
  });

  test('tools/call whoami answers the owner identity', async () => {
    checkWhoami(await inspector(stdioTarget(), [...stdioArgs(), '--method', 'tools/call', '--tool-name', 'whoami']));
  });

  test('tools/call with an unknown key is an isError result: exit 5', async () => {
    checkIsError(
      await inspector(stdioTarget(), [
        ...stdioArgs(),
        '--method',
        'tools/call',
        '--tool-name',
        'whoami',
        '--tool-args-json',
        '{"x":1}',
      ]),
    );
  });

  test('a bad COLONY_TOKEN: the server refuses to start and the inspector fails fast', async () => {
    const r = await inspector(stdioTarget(), ['-e', 'COLONY_TOKEN=colony_not-a-token', '--method', 'tools/list']);
    assert.equal(r.timedOut, false);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /ErrUnauthorized: COLONY_TOKEN is missing, unknown or revoked/);
  });
});

describe('MCP Inspector CLI → colony serve (Streamable HTTP, bearer)', () => {
  test('tools/list shows the identity tools with their annotations; --strict finds no schema error', async () => {
    // --strict exits 6 on an error-severity schema portability problem (warnings are allowed).
    checkList(await inspector([mcpUrl], [...httpArgs(), '--method', 'tools/list', '--strict']));
  });

  test('tools/call whoami answers the owner identity', async () => {
    checkWhoami(await inspector([mcpUrl], [...httpArgs(), '--method', 'tools/call', '--tool-name', 'whoami']));
  });

  test('tools/call with an unknown key is an isError result: exit 5', async () => {
    checkIsError(
      await inspector(
        [mcpUrl],
        [...httpArgs(), '--method', 'tools/call', '--tool-name', 'whoami', '--tool-args-json', '{"x":1}'],
      ),
    );
  });

  test('no token: auth_required (exit 3) at once, never an interactive login', async () => {
    const r = await inspector([mcpUrl], ['--method', 'tools/list']);
    expectExit(r, 3);
    assert.equal(json(r).error?.code, 'auth_required');
    assert.match(json(r).error!.message, /Missing Authorization header/);
  });

  test('every call above reached the audit trail as the owner', () => {
    const r = colony(['audit', 'tail', '--data', data, '--tool', 'whoami', '--json', '-n', '100']);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { principal: string; outcome: string; errorCode: string | null });
    const mine = rows.filter((row) => row.principal === 'user:owner');
    assert.equal(mine.filter((row) => row.outcome === 'success').length, 2, 'one whoami per transport');
    assert.equal(mine.filter((row) => row.errorCode === 'ErrInvalidInput').length, 2, 'one refused call per transport');
  });
});

describe('MCP Inspector CLI, 2026-07-28 (--protocol-era modern): stdio and HTTP', () => {
  const modern = ['--protocol-era', 'modern'];

  test('stdio: tools/list and whoami through server/discover, no handshake', async () => {
    checkList(await inspector(stdioTarget(), [...stdioArgs(), ...modern, '--method', 'tools/list']));
    checkWhoami(
      await inspector(stdioTarget(), [...stdioArgs(), ...modern, '--method', 'tools/call', '--tool-name', 'whoami']),
    );
  });

  test('HTTP: tools/list, whoami, a resource and a prompt, statelessly', async () => {
    checkList(await inspector([mcpUrl], [...httpArgs(), ...modern, '--method', 'tools/list']));
    checkWhoami(
      await inspector([mcpUrl], [...httpArgs(), ...modern, '--method', 'tools/call', '--tool-name', 'whoami']),
    );
    const templates = await inspector([mcpUrl], [...httpArgs(), ...modern, '--method', 'resources/templates/list']);
    expectExit(templates, 0);
    assert.match(JSON.stringify(json(templates).result), /colony:\/\/goals\/\{goalId\}/);
    const missing = await inspector(
      [mcpUrl],
      [...httpArgs(), ...modern, '--method', 'resources/read', '--uri', 'colony://goals/999'],
    );
    assert.notEqual(missing.code, 0);
    assert.match(missing.stdout + missing.stderr, /resource colony:\/\/goals\/999 not found/);
    const prompt = await inspector(
      [mcpUrl],
      [
        ...httpArgs(),
        ...modern,
        '--method',
        'prompts/get',
        '--prompt-name',
        'create-goal',
        '--prompt-args',
        'intent=Keep the docs true',
      ],
    );
    expectExit(prompt, 0);
    assert.match(JSON.stringify(json(prompt).result), /create_goal/);
  });
});

/** A free loopback port for the Inspector's OAuth callback listener. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
      .listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      })
      .on('error', reject);
  });
}

describe('MCP Inspector CLI: its own interactive OAuth flow against colony serve', () => {
  test('no token: it registers, the owner approves by `colony oauth approve`, and tools/list comes back', async () => {
    const callback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    // A "browser" that only prints the URL (BROWSER=echo): this test plays the browser itself.
    const child = spawn(
      process.execPath,
      [
        INSPECTOR_BIN,
        '--cli',
        '--format',
        'json',
        '--connect-timeout',
        '10000',
        '--callback-url',
        callback,
        '--method',
        'tools/list',
        '--',
        mcpUrl,
      ],
      {
        env: {
          ...process.env,
          HOME: join(root, 'home-oauth'),
          MCP_CATALOG_PATH: join(root, 'home-oauth', 'mcp.json'),
          MCP_CLIENT_CONFIG_PATH: join(root, 'home-oauth', 'client.json'),
          MCP_AUTO_OPEN_ENABLED: 'true',
          BROWSER: 'echo',
          MCP_INSPECTOR_SECRET_STORE: 'memory',
          COLONY_DATA: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const authorizeUrl = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (d: Buffer) => {
          stderr += d;
          const m = /Please navigate to: (\S+)/.exec(stderr);
          if (m) resolve(m[1]!);
        });
        void exited.then(() =>
          reject(new Error(`the inspector exited before asking for a login\n${stdout}\n${stderr}`)),
        );
      });
      assert.ok(authorizeUrl.startsWith(mcpUrl.replace(/\/mcp$/, '/oauth/authorize?')), authorizeUrl);
      const page = await (await fetch(authorizeUrl)).text();
      const code = /\b([A-Z0-9]{4}-[A-Z0-9]{4})\b/.exec(page)![1]!;
      const request = /data-request="([0-9a-f]+)"/.exec(page)![1]!;
      const approved = colony(['oauth', 'approve', code, '--data', data]);
      assert.equal(approved.code, 0, approved.stderr);
      const status = (await (await fetch(new URL(`/oauth/authorize/status?request=${request}`, mcpUrl))).json()) as {
        status: string;
        redirect: string;
      };
      assert.equal(status.status, 'approved');
      assert.ok(status.redirect.startsWith(`${callback}?code=`), status.redirect);
      assert.equal((await fetch(status.redirect)).status, 200); // the Inspector's own callback listener takes the code
      assert.equal(await exited, 0, `stdout: ${stdout}\nstderr: ${stderr}`);
      const names = (JSON.parse(stdout) as { result: { tools: ListedTool[] } }).result.tools.map((t) => t.name);
      for (const name of TOOLS) assert.ok(names.includes(name), name);
      const clients = JSON.parse(colony(['oauth', 'clients', '--data', data, '--json']).stdout) as unknown[];
      assert.equal(clients.length, 1, 'the Inspector is the one OAuth client, with its grant');
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  });
});
