import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readAll } from '../../../src/engine/store.js';
import { callTool, mcpFixture, textOf, type McpFixture } from '../../helpers/mcp.js';
import { okText } from '../../helpers/calls.js';

/**
 * xylocopa's task tools on Colony's task aggregate (its acceptance script's checks 14–35): texts,
 * aliases byte for byte, a project task's whole life through the goal-task tools, and xylocopa's task
 * state machine mapped onto Colony's statuses.
 */
delete process.env.COLONY_ALLOWED_ROOTS;

interface World {
  f: McpFixture;
  owner: Client;
  worker: Client;
  dir: string;
}

async function world(t: TestContext): Promise<World> {
  const f = await mcpFixture();
  t.after(() => f.close());
  const owner = await f.connect(f.ownerToken);
  const worker = await f.connect(f.agentToken);
  const dir = join(f.app.dataDir, 'workspace', 'test-project');
  mkdirSync(dir, { recursive: true });
  const made = await okText(owner, 'project_create', {
    name: 'test-mcp-proj',
    path: dir,
    description: 'MCP test project',
  });
  assert.match(made, /Created project/);
  return { f, owner, worker, dir };
}

const idOf = (created: string): string => /Created task `([^`]+)`/.exec(created)![1]!;

describe('xylocopa task tools (its acceptance script, checks 14–35)', () => {
  it("creates, reads, lists, counts, updates and dispatches with xylocopa's texts; aliases answer byte for byte the same", async (t) => {
    const { owner, f } = await world(t);
    assert.match(await okText(owner, 'task_list'), /No tasks found/); // 14
    const created = await okText(owner, 'task_create', {
      title: 'Test MCP task',
      project: 'test-mcp-proj',
      description: 'hello world',
      priority: 1,
    }); // 15
    assert.match(
      created,
      /^Created task `\d+` in project `test-mcp-proj` \[INBOX\]\.\nTitle: Test MCP task\nModel: \(project default\) {2}Effort: \(default\) {2}Priority: 1$/,
    );
    const id = idOf(created);
    assert.match(
      await okText(owner, 'task_create', { title: 'x', project: 'ghost-project' }),
      /^Project `ghost-project` not found\.\nAvailable: test-mcp-proj$/,
    ); // 16
    const got = await okText(owner, 'task_get', { task_id: id }); // 17
    assert.match(got, /^# Task: Test MCP task\n- id: `\d+`\n- status: INBOX\n- project: test-mcp-proj\n/);
    assert.match(got, /## Description\nhello world$/);
    assert.equal(await okText(owner, 'task_get', { task_id: 'bogus' }), 'Task `bogus` not found.'); // 18
    assert.match(await okText(owner, 'task_list'), /Test MCP task/); // 19
    assert.match(await okText(owner, 'task_list', { status: 'INBOX' }), /Test MCP task/);
    assert.match(await okText(owner, 'task_list', { status: 'proposed' }), /Test MCP task/);
    assert.equal(await okText(owner, 'task_list', { status: 'COMPLETE' }), 'No tasks found. (status=COMPLETE)');
    assert.equal(
      await okText(owner, 'task_update', { task_id: id, title: 'Renamed task' }),
      `Updated task ${id}: title.`,
    ); // 20
    assert.equal(
      await okText(owner, 'task_update', { task_id: id }),
      `Task ${id}: no changes (all provided fields matched current values or were empty).`,
    ); // 21
    assert.equal(await okText(owner, 'task_update', { task_id: 'bogus', title: 'x' }), 'Task `bogus` not found.'); // 22
    assert.match(await okText(owner, 'task_counts'), /INBOX: 1/); // 23
    assert.equal(
      await okText(owner, 'task_counts', { project: 'test-mcp-proj' }),
      'Task counts for project `test-mcp-proj` (total: 1):\n  INBOX: 1',
    );
    const head = f.app.engine.head().position;
    assert.match(
      await okText(owner, 'task_dispatch', { task_id: id }),
      new RegExp(`^Task ${id} \\(Renamed task\\) queued for dispatch\\.`),
    ); // 24
    const afterDispatch = f.app.engine.head().position;
    assert.ok(afterDispatch > head);
    assert.equal(
      await okText(owner, 'task_dispatch', { task_id: id }),
      `Task ${id} is already PENDING; awaiting dispatch.`,
    ); // 25
    assert.equal(f.app.engine.head().position, afterDispatch, 'already PENDING writes nothing');
    assert.equal(await okText(owner, 'task_dispatch', { task_id: 'bogus' }), 'Task `bogus` not found.'); // 26
    assert.equal(await okText(owner, 'task_list'), await okText(owner, 'list_tasks')); // 32
    const [a1, a2] = [
      await okText(owner, 'task_create', { title: 'A1', project: 'test-mcp-proj' }),
      await okText(owner, 'create_task', { title: 'A2', project: 'test-mcp-proj' }),
    ]; // 33
    assert.ok(a1.startsWith('Created task ') && a2.startsWith('Created task '));
    const a3 = idOf(await okText(owner, 'task_create', { title: 'A3', project: 'test-mcp-proj' }));
    assert.match(await okText(owner, 'dispatch_task', { task_id: a3 }), /queued for dispatch/); // 34
    assert.match(await okText(owner, 'update_task', { task_id: a3, description: 'fresh' }), /description/); // 35
    const { result: r1 } = await callTool(owner, 'task_get', { task_id: a3 });
    const { result: r2 } = await callTool(owner, 'update_task', { task_id: a3 });
    const { result: r3 } = await callTool(owner, 'task_update', { task_id: a3 });
    assert.deepEqual(r2, r3, 'alias: the same text and structuredContent');
    assert.ok(r1);
  });

  it('validates model and effort like xylocopa and writes nothing on a refusal', async (t) => {
    const { owner, f } = await world(t);
    const head = f.app.engine.head().position;
    const bad = await okText(owner, 'task_create', {
      title: 'x',
      project: 'test-mcp-proj',
      model: 'gpt-4',
      effort: 'huge',
    });
    assert.match(
      bad,
      /^Validation error:\nmodel: must be one of .*\neffort: must be one of low\|medium\|high\|xhigh\|max\|ultracode/,
    );
    assert.equal(f.app.engine.head().position, head);
    const ok = await okText(owner, 'task_create', {
      title: 'y',
      project: 'test-mcp-proj',
      model: 'claude-opus-5',
      effort: 'high',
    });
    assert.match(ok, /Model: claude-opus-5 {2}Effort: high {2}Priority: 0/);
  });

  it("a dispatched project task is claimed, completed and verified like a goal task; task_get shows each step in xylocopa's words", async (t) => {
    const { owner, worker, f } = await world(t);
    const id = idOf(await okText(owner, 'task_create', { title: 'Write the changelog', project: 'test-mcp-proj' }));
    const status = async () => /- status: (\w+)/.exec(await okText(owner, 'task_get', { task_id: id }))![1];
    assert.equal(await status(), 'INBOX');
    const refused = await callTool(worker, 'claim_task', { task_id: Number(id) });
    assert.match(textOf(refused.result), /^ErrTaskNotApproved: /, 'an INBOX task is not claimable');
    await okText(owner, 'task_dispatch', { task_id: id });
    assert.equal(await status(), 'PENDING');
    await okText(worker, 'claim_task', { task_id: Number(id) });
    assert.equal(await status(), 'EXECUTING');
    await okText(worker, 'report_usage', { task_id: Number(id), tokens: 1200, cost_cents: 3 });
    await okText(worker, 'complete_task', { task_id: Number(id), summary: 'Changelog written.' });
    assert.equal(await status(), 'COMPLETE');
    const got = await okText(owner, 'task_get', { task_id: id });
    assert.match(got, /- agent_id: \d+/);
    assert.match(got, /## Agent summary\nChangelog written\./);
    const types = readAll(f.app.engine.db, { limit: 100_000 })
      .filter((e) => e.streamId === `task-${id}`)
      .map((e) => e.type);
    assert.deepEqual(types, [
      'TaskCreated',
      'TaskDispatched',
      'TaskClaimed',
      'CostRecorded',
      'TaskCompleted',
      'TaskVerified',
    ]);
    const channel = await callTool(owner, 'get_channel_messages', { channel_name: 'project-test-mcp-proj', limit: 20 });
    const bodies = (channel.body.messages as { body: string }[]).map((m) => m.body);
    assert.ok(
      bodies.some((b) => b.includes('proposed → approved')),
      JSON.stringify(bodies),
    );
  });
});
