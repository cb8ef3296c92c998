import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { openApp } from '../../../src/app.js';
import { createHttpApp, listen } from '../../../src/http/server.js';
import { createMcpContext } from '../../../src/mcp/context.js';
import { buildToolRegistry } from '../../../src/mcp/tools/index.js';
import { getRun } from '../../../src/projections/run-queries.js';
import { runtimeFixture, type RuntimeFixture } from '../../helpers/runtime.js';
import { tasksClient, type TasksClient } from '../../helpers/tasks-client.js';

/**
 * An MCP task is its record in the log, not a job in a process's memory: a second Colony process on the
 * same store — here a second app, context and HTTP endpoint over the same data directory, with no
 * runtime of its own — answers tasks/get for a task the first one created, sees it complete, and its
 * tasks/cancel stops the process the first one runs (the first process's reactor reads the cancel from
 * the log). When the serving process stops under a run, the task completes with the failed run's answer.
 */
type Body = Record<string, unknown>;

async function secondProcess(t: TestContext, f: RuntimeFixture): Promise<{ base: string }> {
  const app = openApp({ dataDir: f.app.dataDir });
  const ctx = createMcpContext(app, buildToolRegistry());
  const http = createHttpApp(app.engine, ctx);
  const server: Server = await listen(http.app, '127.0.0.1', 0);
  t.after(async () => {
    await http.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    ctx.audit.close();
    app.engine.close();
  });
  return { base: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

async function world(t: TestContext): Promise<{ f: RuntimeFixture; first: TasksClient; second: TasksClient }> {
  const f = await runtimeFixture();
  t.after(() => f.close());
  const other = await secondProcess(t, f);
  const first = await tasksClient(f.base, f.ownerToken);
  const second = await tasksClient(other.base, f.ownerToken);
  t.after(async () => {
    await first.close();
    await second.close();
  });
  return { f, first, second };
}

const runOf = (taskId: string): number => Number(/^run-(\d+)-/.exec(taskId)![1]);

describe('MCP tasks are durable: derived from the log', () => {
  it('another process on the same store follows the task to its result', async (t) => {
    const { f, first, second } = await world(t);
    f.addRunner(
      'answerer',
      `cat >/dev/null; sleep 1; echo '{"type":"result","result":"from the log","usage":{"input_tokens":1,"output_tokens":1}}'`,
    );
    const execution = await first.session.callTool('execute_agent', {
      agent_name: 'answerer',
      prompt: 'Answer slowly.',
    });
    assert.equal(execution.kind, 'task');
    const elsewhere = second.session.task(execution.handle!.taskId);
    assert.equal((await elsewhere.snapshot()).status, 'working');
    const outcome = await elsewhere.result();
    assert.equal(outcome.status, 'completed');
    assert.equal(
      (resultFromTaskOutcome(outcome) as { structuredContent: Body }).structuredContent.content,
      'from the log',
    );
    await execution.detach();
  });

  it('a cancel through another process stops the run this one runs', async (t) => {
    const { f, first, second } = await world(t);
    f.addRunner('sleeper', 'cat >/dev/null; exec sleep 30');
    const execution = await first.session.callTool('execute_agent', { agent_name: 'sleeper', prompt: 'Sleep.' });
    const runId = runOf(execution.handle!.taskId);
    while (getRun(f.app.engine.db, runId)!.status !== 'running') await new Promise((r) => setTimeout(r, 25));
    await second.session.cancelTask(execution.handle!.taskId);
    assert.equal((await execution.settle()).outcome.status, 'cancelled');
    const started = Date.now();
    while (f.reactor.activeRuns > 0) {
      assert.ok(Date.now() - started < 5000, 'the first process killed its run');
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(getRun(f.app.engine.db, runId)!.cancelledBy, 'user:owner');
  });

  it("when the serving process stops under a run, the task completes with the failed run's answer", async (t) => {
    const { f, first, second } = await world(t);
    f.addRunner('sleeper', 'cat >/dev/null; exec sleep 30');
    const execution = await first.session.callTool('execute_agent', { agent_name: 'sleeper', prompt: 'Sleep.' });
    const runId = runOf(execution.handle!.taskId);
    while (getRun(f.app.engine.db, runId)!.status !== 'running') await new Promise((r) => setTimeout(r, 25));
    await execution.detach();
    f.runtime.stop();
    const outcome = await second.session.task(execution.handle!.taskId).result();
    assert.equal(outcome.status, 'completed');
    const body = (resultFromTaskOutcome(outcome) as { structuredContent: Body }).structuredContent;
    assert.deepEqual(
      [body.error_code, body.error_type, body.message],
      ['AGENT_EXECUTION_FAILED', 'RunFailed', 'Failed to execute agent sleeper: Colony stopped during this run'],
    );
  });
});
