import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it, type TestContext } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { JsonRpcResponseError, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { taskId as taskId_ } from '@modelcontextprotocol/ext-tasks/core';
import { GetTaskResultV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { getRun, runtimeOf } from '../../../src/projections/run-queries.js';
import { runtimeFixture, type RuntimeFixture } from '../../helpers/runtime.js';
import { envelope, MODERN, tasksClient, type TasksClient } from '../../helpers/tasks-client.js';

/**
 * execute_agent as an MCP task (the 2026-07-28 tasks extension, SEP-2663), through the official
 * requester library over real HTTP against a serving Colony whose agents really run: the task is the
 * run in the log, its result is the blocking call's, only who may see the run sees the task, a cancel
 * kills the process, and a client that did not declare the extension gets today's blocking answer.
 * complete_task with a command verifier: verifications.test.ts.
 */
type Body = Record<string, unknown>;
type ToolResult = { content: { type: string; text: string }[]; structuredContent?: Body; isError?: boolean };

async function setup(t: TestContext): Promise<RuntimeFixture & { open(token: string): Promise<TasksClient> }> {
  const f = await runtimeFixture();
  const clients: { close(): Promise<void> }[] = [];
  t.after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await f.close();
  });
  return Object.assign(f, {
    async open(token: string) {
      const c = await tasksClient(f.base, token);
      clients.push(c);
      return c;
    },
  });
}

/** A client without the tasks extension (the SDK's own, pinned to 2026-07-28). */
async function plainClient(f: RuntimeFixture, token: string): Promise<Client> {
  const client = new Client({ name: 'plain', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', f.base), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** execute_agent's answer without what differs from run to run (ids, timings). */
function comparable(r: ToolResult): unknown {
  const strip = (b: Body) => {
    const { request_id: _r, trace_id: _t, execution_time: _e, metadata, ...rest } = b;
    const { run_id: _ri, session_id: _s, ...meta } = metadata as Body;
    return { ...rest, metadata: meta };
  };
  return {
    isError: r.isError,
    content: r.content.map((c) => strip(JSON.parse(c.text) as Body)),
    structuredContent: strip(r.structuredContent!),
  };
}

async function rpcError(call: () => Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call();
  } catch (e) {
    assert.ok(e instanceof JsonRpcResponseError, String(e));
    return { code: e.response.code, message: e.response.message };
  }
  assert.fail('expected a JSON-RPC error');
}

/** Processes whose command line is exactly `argv` (any pid namespace: /proc shows them all). */
function processesRunning(argv: string[]): number {
  const want = `${argv.join('\0')}\0`;
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8') === want;
      } catch {
        return false;
      }
    }).length;
}

const until = async (what: string, check: () => boolean, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

const ANSWER = `cat >/dev/null; echo '{"type":"result","result":"forty-two","total_cost_usd":0.034,"usage":{"input_tokens":120,"output_tokens":12}}'`;

describe('execute_agent as an MCP task (2026-07-28, io.modelcontextprotocol/tasks)', () => {
  it("returns a task at once; it settles to exactly the blocking call's result; one audit row per call", async (t) => {
    const f = await setup(t);
    f.addRunner('answerer', ANSWER);
    const owner = await f.open(f.ownerToken);
    assert.deepEqual(owner.client.getServerCapabilities()?.extensions, { 'io.modelcontextprotocol/tasks': {} });

    const execution = await owner.session.callTool('execute_agent', {
      agent_name: 'answerer',
      prompt: 'What is six times seven?',
    });
    assert.equal(execution.kind, 'task');
    const taskId = execution.handle!.taskId;
    assert.match(taskId, /^run-\d+-[\w-]{22}$/);
    const runId = Number(/^run-(\d+)-/.exec(taskId)![1]);
    const { outcome, lastTask } = await execution.settle();
    assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
    assert.equal(lastTask?.retentionMs, null, 'durable: no TTL');
    const fromTask = resultFromTaskOutcome(outcome) as unknown as ToolResult & { resultType: string };
    assert.equal(fromTask.resultType, 'complete');
    assert.equal(fromTask.structuredContent!.request_id, String(runId));
    assert.equal(fromTask.structuredContent!.content, 'forty-two');

    const plain = await plainClient(f, f.ownerToken);
    t.after(() => plain.close());
    const blocking = (await plain.callTool({
      name: 'execute_agent',
      arguments: { agent_name: 'answerer', prompt: 'What is six times seven?' },
    })) as ToolResult;
    assert.deepEqual(comparable(fromTask), comparable(blocking));

    // The same task read again later is the same answer: it is the run in the log, not a job in memory.
    const again = await owner.raw('tasks/get', { taskId, _meta: envelope(true) });
    const parsed = GetTaskResultV2Schema.parse(again.message.result);
    assert.equal(parsed.status, 'completed');
    assert.deepEqual(comparable((parsed as unknown as { result: ToolResult }).result), comparable(blocking));
    assert.deepEqual(
      f.ctx.audit.query({ tool: 'execute_agent' }).map((r) => [r.principal, r.outcome]),
      [
        ['user:owner', 'success'],
        ['user:owner', 'success'],
      ],
    );
  });

  it('only who may see the run sees the task: another agent gets "not found" for get and cancel, the owner sees it', async (t) => {
    const f = await setup(t);
    f.addRunner('slowpoke', 'cat >/dev/null; sleep 2; echo done');
    const starter = f.addRunner('starter', 'true', {}, { toolScope: ['execute_agent'] });
    const asStarter = await f.open(starter.token);
    const peer = await f.open(f.agentToken); // "worker": same tenant, neither the starter nor its parent
    const owner = await f.open(f.ownerToken);

    const execution = await asStarter.session.callTool('execute_agent', {
      agent_name: 'slowpoke',
      prompt: 'Take two seconds.',
    });
    assert.equal(execution.kind, 'task');
    const taskId = execution.handle!.taskId;
    for (const attempt of [() => peer.session.task(taskId).snapshot(), () => peer.session.cancelTask(taskId)]) {
      assert.deepEqual(await rpcError(attempt), { code: -32602, message: 'Failed to retrieve task: Task not found' });
    }
    // A forged id for the same run (another MAC) and one for another run fail the same way, even for the owner.
    const [, run, mac] = /^run-(\d+)-(.+)$/.exec(taskId)!;
    for (const forged of [`run-${run}-${'A'.repeat(22)}`, `run-${Number(run) + 1}-${mac}`]) {
      assert.equal((await rpcError(() => owner.session.task(taskId_(forged)).snapshot())).code, -32602);
    }
    const seen = await owner.session.task(taskId).snapshot();
    assert.equal(seen.status, 'working');
    assert.match(seen.statusMessage!, /^run \d+ of slowpoke is (queued|running)/);
    assert.equal((await execution.settle()).outcome.status, 'completed');
    assert.equal(getRun(f.app.engine.db, Number(run))!.status, 'succeeded', "the peer's cancel did nothing");
  });

  it('tasks/cancel of a long run: the task is cancelled, the process is gone, the agent is idle again', async (t) => {
    const f = await setup(t);
    const argv = ['sleep', '20.4242'];
    f.addRunner('sleeper', `cat >/dev/null; exec ${argv.join(' ')}`);
    const owner = await f.open(f.ownerToken);
    const execution = await owner.session.callTool('execute_agent', { agent_name: 'sleeper', prompt: 'Sleep.' });
    assert.equal(execution.kind, 'task');
    const runId = Number(/^run-(\d+)-/.exec(execution.handle!.taskId)![1]);
    await until('the sleeper to run', () => processesRunning(argv) === 1);
    assert.match(
      (await owner.session.task(execution.handle!.taskId).snapshot()).statusMessage!,
      /is running \(started /,
    );

    await execution.cancel();
    assert.equal((await execution.settle()).outcome.status, 'cancelled');
    const after = await owner.session.task(execution.handle!.taskId).snapshot();
    assert.deepEqual(
      [after.status, after.statusMessage],
      ['cancelled', `run ${runId} of sleeper was cancelled by user:owner`],
    );
    await until('the process to be gone', () => processesRunning(argv) === 0, 3000);
    const run = getRun(f.app.engine.db, runId)!;
    assert.deepEqual([run.status, run.cancelledBy, run.reason], ['failed', 'user:owner', 'cancelled by user:owner']);
    await until('the runner to see the end', () => f.reactor.activeRuns === 0);
    assert.equal(runtimeOf(f.app.engine.db, run.agentId).status, 'idle');
    // Cancelling an ended task again is the same empty acknowledgement (idempotent), and changes nothing.
    const ack = await owner.raw('tasks/cancel', { taskId: execution.handle!.taskId, _meta: envelope(true) });
    assert.deepEqual(Object.keys(ack.message.result!).sort(), ['_meta', 'resultType']);
    assert.equal(getRun(f.app.engine.db, runId)!.cancelledBy, 'user:owner');
  });

  it("without the extension in the request: today's blocking answer, and tasks/* answer -32021 naming it", async (t) => {
    const f = await setup(t);
    f.addRunner('answerer', ANSWER);
    const plain = await plainClient(f, f.ownerToken);
    t.after(() => plain.close());
    const r = (await plain.callTool({
      name: 'execute_agent',
      arguments: { agent_name: 'answerer', prompt: 'Six times seven?' },
    })) as ToolResult;
    assert.equal((r.structuredContent as Body).content, 'forty-two');

    const owner = await f.open(f.ownerToken);
    const direct = await owner.raw('tools/call', {
      name: 'execute_agent',
      arguments: { agent_name: 'answerer', prompt: 'Again?' },
      _meta: envelope(false),
    });
    assert.equal(direct.message.result!.resultType, 'complete');
    assert.equal((direct.message.result!.structuredContent as Body).content, 'forty-two');
    for (const [method, params] of [
      ['tasks/get', {}],
      ['tasks/cancel', {}],
      ['tasks/update', { inputResponses: {} }],
    ] as const) {
      const refused = await owner.raw(method, { taskId: 'run-1-x', ...params, _meta: envelope(false) });
      assert.equal(refused.message.error?.code, -32021, method);
      assert.deepEqual((refused.message.error?.data as Body).requiredCapabilities, {
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      });
    }
    // A 2025-11-25 session (SDK v1, initialize) is as it was: no extension advertised, no tasks/* methods.
    const legacy = await f.connect(f.ownerToken);
    assert.equal((legacy.getServerCapabilities() as Body).extensions, undefined);
    const old = (await legacy.callTool({
      name: 'execute_agent',
      arguments: { agent_name: 'answerer', prompt: 'Once more?' },
    })) as ToolResult;
    assert.equal((old.structuredContent as Body).content, 'forty-two');
    await assert.rejects(
      legacy.request({ method: 'tasks/get', params: { taskId: 'run-1-x' } }, GetTaskResultV2Schema as never),
      /Method not found/,
    );
  });

  it('tasks/get of an id Colony never minted: -32602; tasks/update of a real task: the empty ack (nothing is input_required)', async (t) => {
    const f = await setup(t);
    f.addRunner('answerer', ANSWER);
    const owner = await f.open(f.ownerToken);
    for (const garbage of [
      'nonsense',
      'run-1',
      'run-1-',
      `verify-1.2-${'x'.repeat(22)}`,
      'run-99999999999999999999-abc',
    ]) {
      const r = await owner.raw('tasks/get', { taskId: garbage, _meta: envelope(true) });
      assert.deepEqual(r.message.error, { code: -32602, message: 'Failed to retrieve task: Task not found' }, garbage);
    }
    const execution = await owner.session.callTool('execute_agent', { agent_name: 'answerer', prompt: 'Q?' });
    const taskId = execution.handle!.taskId;
    await owner.session.task(taskId).update({ never: { action: 'accept', content: { x: 'y' } } });
    assert.equal((await execution.settle()).outcome.status, 'completed');
    const missing = await owner.raw('tasks/update', { taskId, _meta: envelope(true) });
    assert.equal(missing.message.error?.code, -32602);
    // tasks/result and tasks/list are gone in this revision.
    for (const method of ['tasks/result', 'tasks/list'])
      assert.equal((await owner.raw(method, { taskId, _meta: envelope(true) })).message.error?.code, -32601, method);
  });
});
