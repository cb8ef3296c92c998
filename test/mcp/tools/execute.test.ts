import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getRun } from '../../../src/projections/run-queries.js';
import { sessionMessages } from '../../../src/projections/session-message-queries.js';
import { callTool, textOf } from '../../helpers/mcp.js';
import { runtimeWithOwner } from '../../helpers/runtime.js';

async function execute(client: Client, agent_name: string, prompt: string): Promise<Record<string, unknown>> {
  const { result, body } = await callTool(client, 'execute_agent', { agent_name, prompt });
  assert.ok(!result.isError, textOf(result));
  assert.deepEqual(JSON.parse(textOf(result)), body, 'the text is the JSON of structuredContent');
  return body;
}

describe('execute_agent', () => {
  it('runs the agent with the prompt and returns its answer, usage and ids', async (t) => {
    const f = await runtimeWithOwner(t);
    f.addRunner(
      'answerer',
      `sed -n '/^# Wake-up/,$p' | tail -n 1 > asked.txt; echo '{"type":"result","result":"forty-two","total_cost_usd":0.034,"usage":{"input_tokens":120,"cache_read_input_tokens":30,"output_tokens":12}}'`,
    );
    const r = await execute(f.owner, '  Answerer ', 'What is six times seven?');
    assert.equal(r.status, 'success');
    assert.equal(r.agent, 'answerer');
    assert.equal(r.content, 'forty-two');
    assert.equal(r.error, null);
    assert.equal(r.tokens_used, 162);
    assert.equal(r.cost, 0.04); // rounded up to whole cents
    const run = getRun(f.app.engine.db, Number(r.request_id))!;
    assert.equal(run.source, 'execute_agent');
    assert.equal(r.trace_id, run.traceId);
    assert.deepEqual(r.metadata, {
      run_id: run.runId,
      session_id: run.sessionId,
      exit_code: 0,
      tokens_in: 150,
      tokens_out: 12,
      reported_tokens: 0,
      reported_cents: 0,
      wake_source: 'execute_agent',
    });
    assert.ok((r.execution_time as number) > 0);
    assert.match(sessionMessages(f.app.engine.db, run.runId)[0]!.content, /What is six times seven\?/);
  });

  it("reports the run's steps as MCP progress notifications when the client asks for them", async (t) => {
    const f = await runtimeWithOwner(t);
    f.addRunner('stepper', `cat >/dev/null; echo '{"type":"result","result":"done"}'`);
    const steps: string[] = [];
    const r = await f.owner.callTool(
      { name: 'execute_agent', arguments: { agent_name: 'stepper', prompt: 'Go.' } },
      undefined,
      { onprogress: (p) => void steps.push(`${p.progress}:${p.message}`) },
    );
    assert.equal((r.structuredContent as { status: string }).status, 'success');
    const runId = (r.structuredContent as { request_id: string }).request_id;
    assert.deepEqual(steps, [
      `1:stepper: run ${runId} queued`,
      `2:stepper: run ${runId} started`,
      `3:stepper: run ${runId} finished`,
    ]);
  });

  it('a failing command: status "error" with the exit code and the end of its output', async (t) => {
    const f = await runtimeWithOwner(t);
    f.addRunner('failing', `cat >/dev/null; echo 'no such file: plan.md' >&2; exit 3`);
    const r = await execute(f.owner, 'failing', 'Try it.');
    assert.equal(r.status, 'error');
    assert.match(r.error as string, /^exit code 3: no such file: plan\.md/);
    assert.equal((r.metadata as { exit_code: number }).exit_code, 3);
  });

  it('a timeout: AGENT_EXECUTION_FAILED with error_type TimeoutError', async (t) => {
    const f = await runtimeWithOwner(t);
    f.addRunner('sleepy', 'cat >/dev/null; exec sleep 20', { timeoutSec: 1 });
    const r = await execute(f.owner, 'sleepy', 'Take your time.');
    assert.deepEqual(r, {
      status: 'error',
      error_code: 'AGENT_EXECUTION_FAILED',
      agent: 'sleepy',
      message: 'Failed to execute agent sleepy: timed out after 1s',
      error_type: 'TimeoutError',
    });
  });

  it('a missing agent: AGENT_NOT_FOUND; no backend, or a refusing gate: AGENT_EXECUTION_FAILED; nothing runs', async (t) => {
    const f = await runtimeWithOwner(t);
    assert.deepEqual(await execute(f.owner, 'ghost', 'hello'), {
      status: 'error',
      error_code: 'AGENT_NOT_FOUND',
      message: "Agent 'ghost' not found.",
    });
    const noBackend = await execute(f.owner, 'worker', 'hello');
    assert.equal(noBackend.error_code, 'AGENT_EXECUTION_FAILED');
    assert.equal(noBackend.error_type, 'ErrNoBackend');
    const gated = f.addRunner('gated', 'cat >/dev/null', { dailyRunBudget: 0 });
    const refused = await execute(f.owner, 'gated', 'hello');
    assert.equal(refused.error_type, 'RunRefused');
    assert.match(refused.message as string, /^Failed to execute agent gated: refused by the daily_run_budget gate: /);
    assert.equal(getRun(f.app.engine.db, 1)!.agentId, gated.agentId);
    assert.equal(getRun(f.app.engine.db, 1)!.startedAt, null);
  });

  it('a Colony process that does not run agents answers AGENT_EXECUTION_FAILED (RuntimeUnavailable)', async (t) => {
    const f = await runtimeWithOwner(t);
    f.addRunner('idle-one', 'cat >/dev/null');
    f.ctx.runtime.reactor = null;
    const r = await execute(f.owner, 'idle-one', 'hello');
    assert.equal(r.error_type, 'RuntimeUnavailable');
  });
});
