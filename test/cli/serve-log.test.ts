import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { colony, colonyLive, type LiveCli } from '../helpers/cli.js';
import { tempDir } from '../../testkit/temp-dir.js';
import { ok } from '../helpers/calls.js';

/**
 * `colony serve`'s operator log on stderr (JSON lines, stderr being a pipe here): one info line per
 * tool call that changes something — never for reads, never with an argument's value —, per decided
 * proposal (made over MCP or by `colony approve` in another process), per run started and finished,
 * and per budget alert. A real server process, a real MCP client over HTTP, the real CLI beside it.
 */
type Body = Record<string, unknown>;
const scratch = tempDir('colony-serve-log-');
after(() => scratch.cleanup());
const dir = join(scratch.dir, 'data');
const TITLE = 'Ship the release notes';
const SECRETISH = 'sk-live-do-not-log-0123456789';
let live: LiveCli;
let owner: Client;
let stderr: string[];

/** The first JSON log line with this message (and these fields), waited for. */
async function entry(msg: string, fields: Body = {}): Promise<Body> {
  const matches = (line: string) => {
    if (!line.startsWith('{"level":')) return false; // not the .mcp.json snippet serve prints
    const e = JSON.parse(line) as Body;
    return e.msg === msg && Object.entries(fields).every(([k, v]) => e[k] === v);
  };
  return JSON.parse(await live.waitFor({ test: matches } as RegExp, 'stderr')) as Body;
}

before(async () => {
  live = colonyLive(['serve', '--data', dir, '--port', '0', '--sandbox', 'off']);
  const base = (await live.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 'stderr')).match(
    /http:\/\/127\.0\.0\.1:\d+/,
  )![0];
  const token = (await live.waitFor(/Owner "owner" token/, 'stderr')).match(/colony_\S+/)![0];
  // Everything serve writes from now on, to show what never appears in it.
  stderr = [];
  live.proc.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  owner = new Client({ name: 'serve-log-test', version: '0' });
  await owner.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
});
after(async () => {
  await owner.close();
  assert.equal(await live.stop(), 0);
});

describe('colony serve logs', () => {
  let goalId: number;

  it('a write call is one JSON line: principal, tool, outcome, ms — no argument values; a read call is none', async () => {
    goalId = (
      await ok(owner, 'create_goal', {
        title: TITLE,
        description: `Every note reviewed; the key ${SECRETISH} is not ours.`,
        budget_tokens: 100,
      })
    ).goal_id as number;
    const e = await entry('tool call', { tool: 'create_goal' });
    assert.deepEqual(
      [e.level, e.principal, e.principalId, e.outcome, e.code, typeof e.ms],
      [30, 'user:owner', 'user:1', 'success', null, 'number'],
    );
    await ok(owner, 'list_goals', {});
    await ok(owner, 'get_goal', { goal_id: goalId });
    const refused = (await owner.callTool({
      name: 'complete_goal',
      arguments: { goal_id: 999, status: 'completed', summary: 'x' },
    })) as CallToolResult;
    assert.equal(refused.isError, true);
    const failed = await entry('tool call', { tool: 'complete_goal' });
    assert.deepEqual([failed.outcome, failed.code], ['error', 'ErrGoalNotFound']);
    const text = stderr.join('');
    assert.doesNotMatch(text, /"tool":"(list_goals|get_goal)"/, 'reads are not logged');
    assert.ok(!text.includes(SECRETISH) && !text.includes(TITLE), 'argument values are never logged');
  });

  it('decided proposals, over MCP and by `colony approve` from another process', async () => {
    const leaf = { title: 'Write the notes', description: 'One section per change.' };
    const p = await ok(owner, 'propose_task_tree', { goal_id: goalId, tree: leaf });
    await ok(owner, 'react', { message_id: p.proposal_message_id, reaction: 'approve' });
    const e = await entry('proposal approved', { proposalId: p.proposal_id as number });
    assert.deepEqual([e.goalId, e.kind, e.by, e.auto, e.tasks], [goalId, 'task_tree', 'owner', false, 1]);

    const other = (
      await ok(owner, 'create_goal', { title: 'Audit the docs', description: 'Every page against the code.' })
    ).goal_id as number;
    const q = await ok(owner, 'propose_task_tree', { goal_id: other, tree: leaf });
    const cli = colony(['reject', String(q.proposal_id), '--reason', 'Not now', '--data', dir]);
    assert.equal(cli.code, 0, cli.stderr);
    const r = await entry('proposal rejected', { proposalId: q.proposal_id as number });
    assert.deepEqual([r.goalId, r.by, r.decision], [other, 'owner', 'rejected']);
    assert.ok(!stderr.join('').includes('Not now'), 'a reason is prose: not logged');
  });

  it('a budget alert at 80 %', async () => {
    const [task] = (await ok(owner, 'get_goal', { goal_id: goalId })).tasks_tree as { id: number }[];
    await ok(owner, 'report_usage', { task_id: task!.id, tokens: 85, cost_cents: 0 });
    const e = await entry('budget alert', { goalId });
    assert.deepEqual([e.dimension, e.spent, e.budget], ['tokens', 85, 100]);
  });

  it('runs started and finished', async () => {
    const prompt = join(scratch.dir, 'prompt.md');
    writeFileSync(prompt, 'You check one thing and stop.');
    assert.equal(
      colony([
        'agents',
        'create',
        'checker',
        '--model',
        'test-model',
        '--prompt-file',
        prompt,
        '--tools',
        'whoami',
        '--command',
        'true',
        '--data',
        dir,
      ]).code,
      0,
    );
    const woke = colony(['agents', 'wake', 'checker', '--json', '--data', dir]);
    assert.equal(woke.code, 0, woke.stderr);
    const started = await entry('run started', { agent: 'checker' });
    const finished = await entry('run finished', { runId: started.runId as number });
    assert.deepEqual(
      [started.source, finished.agent, finished.status, finished.exitCode],
      ['manual', 'checker', 'succeeded', 0],
    );
  });
});
