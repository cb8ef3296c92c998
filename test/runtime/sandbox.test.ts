import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { configureSandbox } from '../../src/actions/runs/agent-controls.js';
import type { SandboxOverrides } from '../../src/events/sandbox.js';
import { getRun, type RunRow } from '../../src/projections/run-queries.js';
import { COLONY_ROOT } from '../../src/runtime/confine.js';
import { runtimeFixture, type RuntimeFixture } from '../helpers/runtime.js';
import { ok } from '../helpers/calls.js';
import { readAll } from '../../src/engine/store.js';

/**
 * Through the real reactor and harness: every agent process runs in a Bubblewrap sandbox. An
 * agent command that tries to read the master key, the database or its WAL, another agent's files or the
 * owner's home, to write outside its workspace, to see or signal Colony's process, to fork-bomb or to
 * allocate past its memory limit does no harm; the run records why (its profile, the limit it hit), and
 * Colony keeps serving. A legitimate claude-shaped run (MCP, its workspace, usage) still works.
 */
const WORKER = `node --import ${import.meta.resolve('tsx')} ${join(COLONY_ROOT, 'test/fixtures/agents/worker.ts')}`;
const OWNER_FILE = join(homedir(), `.colony-sandbox-test-${process.pid}`);

async function setup(t: TestContext): Promise<RuntimeFixture> {
  const f = await runtimeFixture();
  t.after(() => f.close());
  return f;
}

async function runOf(
  f: RuntimeFixture,
  name: string,
  command: string,
  sandbox: Partial<SandboxOverrides> = {},
  timeoutSec = 30,
): Promise<RunRow> {
  const a = f.addRunner(name, command, { timeoutSec });
  if (Object.keys(sandbox).length)
    configureSandbox(f.app, f.ownerId, a.agentId, sandbox, 'owner', { actor: 'user:owner' });
  return f.reactor.whenDone(f.reactor.wake({ agentId: a.agentId, source: 'manual', by: 'user-1' }).run.runId);
}

/** A shell line that prints `name: DENIED` when `attempt` fails and `name: LEAKED` when it works. */
const attempt = (name: string, cmd: string) =>
  `if ${cmd} >/dev/null 2>&1; then echo "${name}: LEAKED"; else echo "${name}: DENIED"; fi`;

function escapes(f: RuntimeFixture): string {
  const data = f.app.dataDir;
  return [
    attempt('master key', `cat '${data}/secrets.key'`),
    attempt('database', `cat '${data}/colony.db'`),
    attempt('wal', `cat '${data}/colony.db-wal'`),
    attempt('audit', `cat '${data}/audit.db'`),
    attempt('audit journal', `ls '${data}/audit-journal'`),
    attempt('other agent', `cat '${data}/workspace/agents/victim/private.txt'`),
    attempt('owner home', `cat '${OWNER_FILE}'`),
    // Writes are judged on the host afterwards: inside, a path under the data dir may be the sandbox's own private tmpfs.
    `echo x > '${data}/escaped.txt' 2>/dev/null; echo x > '${data}/workspace/agents/victim/planted.txt' 2>/dev/null; true`,
    attempt('write colony code', `sh -c "echo x > '${COLONY_ROOT}/escaped.txt'"`),
    attempt('signal colony', `kill -0 ${process.pid}`),
    attempt('see colony', `sh -c "ps -e -o pid= | grep -qw ${process.pid}"`),
    attempt(
      'host loopback',
      `node -e "require('net').connect(${new URL(f.base).port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(1))"`,
    ),
    'echo mine > own.txt && echo "own workspace: WRITTEN"',
  ].join('; ');
}

describe('agents run confined', () => {
  it('an agent reads and writes nothing outside its workspace, never sees Colony, and the run records its profile', async (t) => {
    const f = await setup(t);
    mkdirSync(join(f.app.dataDir, 'workspace', 'agents', 'victim'), { recursive: true });
    writeFileSync(join(f.app.dataDir, 'workspace', 'agents', 'victim', 'private.txt'), 'victim secret');
    writeFileSync(OWNER_FILE, 'owner secret');
    t.after(() => rmSync(OWNER_FILE, { force: true }));
    assert.ok(existsSync(join(f.app.dataDir, 'audit-journal')), 'the journal dir exists on the host');
    const run = await runOf(f, 'intruder', `cat >/dev/null; ${escapes(f)}`);
    assert.equal(run.status, 'succeeded', run.outputTail ?? '');
    const lines = (run.outputTail ?? '').trim().split('\n');
    assert.equal(lines.filter((l) => l.endsWith('LEAKED')).length, 0, lines.join('\n'));
    assert.equal(lines.filter((l) => l.endsWith('DENIED')).length, 11, lines.join('\n'));
    assert.ok(lines.includes('own workspace: WRITTEN'));
    assert.equal(readFileSync(join(f.app.dataDir, 'workspace', 'agents', 'intruder', 'own.txt'), 'utf8'), 'mine\n');
    for (const planted of [
      join(f.app.dataDir, 'escaped.txt'),
      join(COLONY_ROOT, 'escaped.txt'),
      join(f.app.dataDir, 'workspace', 'agents', 'victim', 'planted.txt'),
    ]) {
      assert.ok(!existsSync(planted), `${planted} was written on the host`);
    }
    assert.equal(run.sandbox?.mode, 'bwrap');
    assert.equal(run.sandbox?.network, 'allow');
    assert.deepEqual(run.sandbox?.writable?.slice(0, 1), [join(f.app.dataDir, 'workspace', 'agents', 'intruder')]);
  });

  it('a claude-shaped run still works: MCP through the sandbox, its workspace, usage', async (t) => {
    const f = await setup(t);
    for (const network of ['allow', 'none', 'host'] as const) {
      const run = await runOf(f, `worker-${network}`, `WORKER_COST_USD=0.02 ${WORKER}`, { network });
      assert.equal(run.status, 'succeeded', `${network}: ${run.outputTail}`);
      assert.equal(run.costCents, 2);
      const seen = JSON.parse(
        readFileSync(join(f.app.dataDir, 'workspace', 'agents', `worker-${network}`, `run-${run.runId}.json`), 'utf8'),
      ) as { env: Record<string, string> };
      assert.equal(seen.env.HOME, '/home/agent');
      assert.equal(seen.env.COLONY_URL, network === 'host' ? `${f.base}/mcp` : 'http://127.0.0.1:7070/mcp');
      assert.equal(run.sandbox?.network, network);
    }
  });

  it('limits: a fork bomb, memory far past the limit, CPU time and file size each end with the limit recorded; Colony keeps serving', async (t) => {
    const f = await setup(t);
    const bomb = await runOf(f, 'bomber', 'cat >/dev/null; b() { b | b & }; b; sleep 3', { pids: 64 }, 6);
    assert.equal(bomb.limitHit, 'pids', `${bomb.status} ${bomb.outputTail}`);
    const hog = await runOf(
      f,
      'hog',
      `cat >/dev/null; node -e "const a = []; for (;;) a.push(Buffer.alloc(16 * 1024 * 1024, 1))"`,
      { memoryMb: 128 },
    );
    assert.equal(hog.limitHit, 'memory', `${hog.status} ${hog.signal} ${hog.outputTail}`);
    assert.equal(hog.status, 'failed');
    const spinner = await runOf(f, 'spinner', 'cat >/dev/null; while :; do :; done', { cpuSec: 1 });
    assert.deepEqual([spinner.limitHit, spinner.exitCode], ['cpu', 128 + 24], 'SIGXCPU, passed on by bubblewrap');
    const writer = await runOf(f, 'writer', 'cat >/dev/null; head -c 5000000 /dev/zero > big.bin', { fileMb: 1 });
    assert.deepEqual([writer.limitHit, writer.exitCode], ['file_size', 128 + 25], 'SIGXFSZ');
    const res = await fetch(`${f.base}/health`);
    assert.equal(res.status, 200, 'Colony keeps serving');
    const after = await runOf(f, 'after', 'cat >/dev/null; echo fine');
    assert.equal(after.status, 'succeeded');
  });

  it('network: none reaches only Colony; allow lets through exactly its allow-list, through the proxy', async (t) => {
    const f = await setup(t);
    const server = createServer((s) => s.end('hello from outside\n')).listen(0, '127.0.0.1');
    t.after(() => server.close());
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as { port: number }).port;
    const connectVia = (target: string) =>
      `node -e "const s = require('net').connect(7070, '127.0.0.1', () => s.write('CONNECT ${target} HTTP/1.1\\\\r\\\\nHost: ${target}\\\\r\\\\n\\\\r\\\\n')); let b = ''; s.on('data', (d) => { b += d; if (b.includes('hello')) { console.log('THROUGH ${target}'); process.exit(0); } if (b.startsWith('HTTP/1.1 403')) { console.log('BLOCKED ${target}'); process.exit(0); } }); s.on('error', (e) => { console.log('ERROR ${target} ' + e.code); process.exit(0); })"`;
    const run = await runOf(
      f,
      'surfer',
      `cat >/dev/null; ${connectVia(`127.0.0.1:${port}`)}; ${connectVia('example.com:443')}`,
      { network: 'allow', allowHosts: [`127.0.0.1:${port}`] },
    );
    assert.match(run.outputTail ?? '', new RegExp(`THROUGH 127.0.0.1:${port}`));
    assert.match(run.outputTail ?? '', /BLOCKED example.com:443/);
    const get = (path: string) =>
      `node -e "require('http').get('http://127.0.0.1:7070${path}', (r) => console.log('GOT ${path} ' + r.statusCode)).on('error', (e) => console.log('ERROR ${path} ' + e.code))"`;
    const none = await runOf(
      f,
      'hermit',
      `cat >/dev/null; ${connectVia(`127.0.0.1:${port}`)}; ${get('/health')}; ${get('/oauth/authorize?client_id=https://attacker.example/x')}; ${get('/api/goals')}`,
      { network: 'none' },
    );
    assert.match(
      none.outputTail ?? '',
      new RegExp(`BLOCKED 127.0.0.1:${port}`),
      'under none the gate tunnels to nothing',
    );
    // Through the gate a run reaches /mcp (and /health), never the OAuth endpoints (a fetch of any URL by
    // Colony, a look-alike authorization) nor the console's REST.
    assert.match(none.outputTail ?? '', /GOT \/health 200/);
    assert.match(none.outputTail ?? '', /GOT \/oauth\/authorize\S* 403/);
    assert.match(none.outputTail ?? '', /GOT \/api\/goals 403/);
    assert.deepEqual(getRun(f.app.engine.db, run.runId)?.sandbox?.allowHosts, [`127.0.0.1:${port}`]);
  });

  it('an agent opted out runs unconfined and says so; without bubblewrap a confined run is refused with the reason', async (t) => {
    const f = await setup(t);
    const open = await runOf(f, 'trusted', `cat >/dev/null; test -r '${f.app.dataDir}/secrets.key' && echo visible`, {
      sandbox: 'off',
    });
    assert.match(open.outputTail ?? '', /visible/);
    assert.deepEqual([open.sandbox?.mode, open.sandbox?.optOut], ['off', 'agent']);
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    t.after(() => {
      process.env.PATH = path;
    });
    const { hostSupportForTests } = await import('../../src/runtime/sandbox.js');
    hostSupportForTests.reset();
    t.after(() => hostSupportForTests.reset());
    const refused = await runOf(f, 'unlucky', 'cat >/dev/null; echo ran');
    process.env.PATH = path;
    assert.equal(refused.status, 'failed');
    assert.match(refused.reason ?? '', /bubblewrap \(bwrap\) is not installed.*serve --sandbox off/);
    assert.equal(refused.outputTail, null, 'nothing ran');
  });

  it("a command verifier is confined the same way: it reads nothing of Colony's, and a fork bomb ends at its limit", async (t) => {
    process.env.COLONY_RUN_PIDS = '48';
    t.after(() => {
      delete process.env.COLONY_RUN_PIDS;
    });
    const f = await runtimeFixture({ agentTools: ['whoami', 'claim_task', 'complete_task'] });
    t.after(() => f.close());
    writeFileSync(OWNER_FILE, 'owner secret');
    t.after(() => rmSync(OWNER_FILE, { force: true }));
    const owner = await f.connect(f.ownerToken);
    const worker = await f.connect(f.agentToken);
    await ok(owner, 'add_verifier', { name: 'snoop', command: escapes(f), timeout_sec: 30 });
    await ok(owner, 'add_verifier', { name: 'bomb', command: 'b() { b | b & }; b; sleep 2; exit 0', timeout_sec: 5 });
    const g = await ok(owner, 'create_goal', {
      title: 'Confined checks',
      description: 'Verifiers that misbehave.',
      approval_mode: 'auto',
    });
    const tasks = (
      await ok(owner, 'propose_task_tree', {
        goal_id: g.goal_id,
        tree: {
          title: 'Root task',
          description: 'Two checked leaves.',
          children: [
            {
              title: 'Snooped leaf',
              description: 'Checked by snoop.',
              verifier_config: { kind: 'command', recipe: 'snoop' },
            },
            {
              title: 'Bombed leaf',
              description: 'Checked by bomb.',
              verifier_config: { kind: 'command', recipe: 'bomb' },
            },
          ],
        },
      })
    ).task_ids as number[];
    for (const id of tasks.slice(1)) {
      await ok(worker, 'claim_task', { task_id: id });
      await ok(worker, 'complete_task', { task_id: id, summary: 'ready' });
    }
    await new Promise((r) => setTimeout(r, 100));
    await f.runtime.verifier.idle();
    const verdicts = readAll(f.app.engine.db, { limit: 10_000 })
      .filter((e) => e.type === 'TaskVerified')
      .map(
        (e) =>
          e.data as {
            taskId: number;
            output: string;
            reason: string;
            limit?: string;
            sandbox?: { mode: string; network: string };
          },
      );
    const snoop = verdicts.find((v) => v.taskId === tasks[1])!;
    assert.equal(snoop.output.split('\n').filter((l) => l.endsWith('LEAKED')).length, 0, snoop.output);
    assert.match(snoop.output, /master key: DENIED/);
    assert.deepEqual([snoop.sandbox?.mode, snoop.sandbox?.network], ['bwrap', 'none']);
    const bomb = verdicts.find((v) => v.taskId === tasks[2])!;
    assert.equal(bomb.limit, 'pids', bomb.reason);
    assert.match(bomb.reason, /process count limit/);
    assert.equal(
      (verdicts.find((v) => v.taskId === tasks[2]) as unknown as { verdict: string }).verdict,
      'reject',
      'a check cut short by a limit approves nothing',
    );
    assert.equal((await fetch(`${f.base}/health`)).status, 200);
  });
});
