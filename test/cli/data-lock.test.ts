import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { colony, colonyLive, colonyOk, logHead, oneLine, stdioClient, type LiveCli } from '../helpers/cli.js';
import { approvedTask, ok } from '../helpers/calls.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * The data directory's lock (src/cli/data-lock.ts), through real `colony` processes: one process runs a
 * data dir's jobs (the reactor, command verifiers, the lease sweeper), so nothing runs twice. A second
 * `colony serve` is refused naming the first; `colony stdio` processes (one per MCP client) serve beside
 * it without the jobs; the CLI reads and writes through the log all along; a holder killed with -9
 * leaves no stale lock; a stdio holding the lock hands it to a serve that starts.
 */
const scratch = tempDir('colony-cli-lock-');
after(() => scratch.cleanup());

const OFF = { COLONY_SANDBOX: 'off' };
let dirs = 0;
function initialized(): { dir: string; token: string } {
  const dir = join(scratch.dir, `data-${++dirs}`);
  const init = JSON.parse(colonyOk(['init', '--data', dir, '--json'])) as { token: string };
  return { dir, token: init.token };
}

async function serving(dir: string): Promise<{ live: LiveCli; url: string }> {
  const live = colonyLive(['serve', '--data', dir, '--port', '0', '--sandbox', 'off']);
  const line = await live.waitFor(/^Colony listening on http:\/\/\S+/, 'stderr');
  return { live, url: /(http:\/\/\S+)/.exec(line)![1]! };
}

/** What a `colony stdio` said on stderr so far (the MCP client's transport pipes it). */
function stderrOf(client: Client): () => string {
  let text = '';
  (client.transport as StdioClientTransport).stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return () => text;
}

const holder = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'colony.lock.json'), 'utf8')) as { pid: number; role: string; command: string };

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('one colony serve per data directory', () => {
  it('a second serve exits 1 with one line naming the first (pid, command, since) and writes nothing', async () => {
    const { dir } = initialized();
    const first = await serving(dir);
    try {
      const before = logHead(dir);
      const second = colony(['serve', '--data', dir, '--port', '0', '--sandbox', 'off']);
      assert.equal(second.code, 1, second.stderr);
      oneLine(second.stderr);
      assert.match(
        second.stderr,
        new RegExp(
          `^colony: ${dir} is in use by pid ${first.live.proc.pid} \\(colony serve --data ${dir} --port 0 --sandbox off, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\): one colony serve per data directory`,
        ),
      );
      assert.equal(logHead(dir), before, 'nothing appended');
      assert.equal((await fetch(`${first.url}/health`)).status, 200, 'the first one serves on');
    } finally {
      assert.equal(await first.live.stop(), 0);
    }
  });

  it('the CLI reads and writes through the log while serve runs, and stdio clients serve beside it without the jobs', async () => {
    const { dir, token } = initialized();
    const { live } = await serving(dir);
    try {
      assert.match(
        colonyOk([
          'goals',
          'create',
          '--title',
          'Beside serve',
          '--description',
          'Written while serve runs.',
          '--data',
          dir,
        ]),
        /^Created goal 1/,
      );
      assert.match(colonyOk(['goals', 'list', '--data', dir]), /Beside serve/);
      const client = await stdioClient(dir, token, undefined, OFF);
      const said = stderrOf(client);
      try {
        assert.equal((await ok(client, 'whoami')).name, 'owner');
        await until('the stdio says who runs the jobs', () => /runs the jobs of/.test(said()));
        assert.match(
          said(),
          new RegExp(
            `pid ${live.proc.pid} \\(colony serve .*\\) runs the jobs of ${dir}; this process serves MCP only`,
          ),
        );
        assert.equal(holder(dir).pid, live.proc.pid, 'serve still holds the lock');
      } finally {
        await client.close();
      }
    } finally {
      assert.equal(await live.stop(), 0);
    }
  });

  it('kill -9 of the holder leaves no stale lock: the next serve starts at once and holds it', async () => {
    const { dir } = initialized();
    const first = await serving(dir);
    assert.equal(await first.live.stop('SIGKILL'), null);
    const next = await serving(dir);
    try {
      assert.deepEqual([holder(dir).pid, holder(dir).role], [next.live.proc.pid, 'serve']);
    } finally {
      assert.equal(await next.live.stop(), 0);
    }
  });

  it('a stdio that holds the lock hands it to a serve that starts, and goes on serving its client', async () => {
    const { dir, token } = initialized();
    const client = await stdioClient(dir, token, undefined, OFF);
    const said = stderrOf(client);
    try {
      await until('the stdio holds the lock', () => existsSync(join(dir, 'colony.lock.json')));
      assert.equal(holder(dir).role, 'stdio');
      const { live } = await serving(dir);
      try {
        assert.deepEqual([holder(dir).pid, holder(dir).role], [live.proc.pid, 'serve']);
        await until('the stdio says it handed over', () => /handed the jobs/.test(said()));
        assert.match(said(), new RegExp(`handed the jobs of ${dir} to colony serve \\(pid ${live.proc.pid}\\)`));
        assert.equal((await ok(client, 'whoami')).name, 'owner');
      } finally {
        assert.equal(await live.stop(), 0);
      }
      await until('the stdio takes the jobs back', () => /now runs the jobs/.test(said()));
      assert.equal(holder(dir).role, 'stdio');
    } finally {
      await client.close();
    }
  });
});

describe('nothing runs twice', () => {
  it('a command verifier runs once, in the holder, however many stdio processes serve the data dir', async () => {
    const { dir, token } = initialized();
    const marks = join(scratch.dir, 'verifier-runs.txt');
    const release = join(scratch.dir, 'verifier-release');
    const prompt = join(scratch.dir, 'prompt.md');
    writeFileSync(prompt, 'You do the work.');
    const tools = 'claim_task,complete_task,whoami';
    const worker = JSON.parse(
      colonyOk([
        'agents',
        'create',
        'worker',
        '--model',
        'm',
        '--prompt-file',
        prompt,
        '--tools',
        tools,
        '--data',
        dir,
        '--json',
      ]),
    ) as { token: string };
    const owner = await stdioClient(dir, token, undefined, OFF); // the first: it holds the lock
    await ok(owner, 'whoami'); // it answers once it has taken the lock
    const agent = await stdioClient(dir, worker.token, undefined, OFF);
    let late: Client | null = null;
    try {
      // It marks each run, then waits (30 s at most) until the test lets it end.
      const wait = `i=0; while [ ! -e ${release} ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done`;
      await ok(owner, 'add_verifier', { name: 'check', command: `echo ran >> ${marks}; ${wait}` });
      const { goalId, taskId } = await approvedTask(owner, { verifier_config: { kind: 'command', recipe: 'check' } });
      await ok(agent, 'claim_task', { task_id: taskId });
      await ok(agent, 'complete_task', { task_id: taskId, summary: 'done' }); // handed in through a follower
      await until('the verifier runs', () => existsSync(marks));
      // A client that starts while the verifier runs: before the lock, its start took the task up again.
      late = await stdioClient(dir, token, undefined, OFF);
      assert.equal((await ok(late, 'whoami')).name, 'owner');
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // time for a second run to start
      writeFileSync(release, '');
      await until('the verdict', async () => {
        const tree = (await ok(owner, 'get_goal', { goal_id: goalId })).tasks_tree as { status: string }[];
        return tree[0]!.status === 'done';
      });
      assert.deepEqual(readFileSync(marks, 'utf8').trim().split('\n'), ['ran']);
    } finally {
      await late?.close();
      await agent.close();
      await owner.close();
    }
  });
});
