import * as z from 'zod';
import { isDomainError } from '../../errors.js';
import { listAgents, type AgentRow } from '../../projections/principal-queries.js';
import { type RunRow } from '../../projections/run-queries.js';
import { sessionMessages } from '../../projections/session-message-queries.js';
import type { App } from '../../app.js';
import type { RunStarter } from '../../runtime/reactor.js';
import { peerExecutePrompt } from '../../runtime/wake-prompts.js';
import { defineTool, type AnyTool, type ToolContext } from '../tool.js';

/**
 * codomyrmex's execute_agent on Colony's runtime: the named agent of your
 * team runs now — a real run with its session, gates and budget, queued behind its current run if it
 * has one — and the call waits for its end. Result shapes are codomyrmex's: the response object
 * (status "success" when the process exited 0, "error" with `error` set when it exited otherwise), or
 * `{"status":"error","error_code":"AGENT_NOT_FOUND"|"AGENT_EXECUTION_FAILED",…}` when no run could
 * give an answer (unknown agent, no backend, a gate refused, it could not start, it timed out).
 * An agent's prompt reaches its peer quoted under the caller's name (wake-prompts.ts): a peer's words
 * never pass for Colony's or the owner's.
 */
const Result = z.looseObject({
  status: z.enum(['success', 'error']),
  agent: z.string().optional(),
  content: z.string().optional(),
  error: z.string().nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  execution_time: z.number().nullable().optional(),
  tokens_used: z.number().int().nullable().optional(),
  cost: z.number().nullable().optional(),
  request_id: z.string().nullable().optional(),
  trace_id: z.string().nullable().optional(),
  error_code: z.enum(['AGENT_NOT_FOUND', 'AGENT_EXECUTION_FAILED']).optional(),
  message: z.string().optional(),
  error_type: z.string().optional(),
});
type Result = z.infer<typeof Result>;

const execute = defineTool({
  name: 'execute_agent',
  title: 'Execute an agent',
  description:
    'Runs one of your team\'s agents now with this prompt and waits for it to finish (within its run timeout, default 15 min). The run is a real Colony run: its process gets the prompt on stdin, its session is recorded (session_read), its usage counts. Returns {"status":"success"|"error","agent","content" (the agent\'s answer),"error","metadata" (run_id, session_id, exit_code, tokens_in, tokens_out, reported_tokens, reported_cents),"execution_time" (s),"tokens_used","cost" (USD),"request_id" (the run id),"trace_id"}. When no answer can come back: {"status":"error","error_code":"AGENT_NOT_FOUND","message"} or {"status":"error","error_code":"AGENT_EXECUTION_FAILED","agent","message","error_type"} (no backend command, refused by a gate such as quarantine or a paused goal, could not start, timed out, or this process does not run agents). A client with the MCP tasks extension gets a task at once instead, which completes with this same result.',
  trust: 'elevated',
  surface: 'agent',
  module: 'runtime',
  input: z.strictObject({
    agent_name: z.string().max(200).describe("The agent's name (matched case-insensitively after trimming)"),
    prompt: z.string().max(100_000).describe('What the agent should do: its stdin after its system prompt'),
  }),
  output: Result,
  async handler(ctx, a) {
    const ready = prepare(ctx, a);
    if ('now' in ready) return ready.now;
    const steps = reportRunSteps(ctx, ready.agent);
    try {
      const run = ready.reactor.beginExecute(ready.agent.agentId, promptOf(ctx, a.prompt), ctx.command.actor);
      steps.follow(run.runId);
      return runAnswer(ctx.app, ready.agent.name, await ready.reactor.awaitRun(run));
    } catch (err) {
      if (isDomainError(err)) return failure(ready.agent.name, err.message, err.code);
      throw err;
    } finally {
      steps.unsubscribe();
    }
  },
  // As a task (src/mcp/tasks): the same run, woken the same way, followed in the log instead of awaited.
  task(ctx, a) {
    const ready = prepare(ctx, a);
    if ('now' in ready) return ready;
    try {
      const run = ready.reactor.beginExecute(ready.agent.agentId, promptOf(ctx, a.prompt), ctx.command.actor);
      return run.status === 'refused'
        ? { now: runAnswer(ctx.app, ready.agent.name, run) }
        : { task: { kind: 'run' as const, runId: run.runId } };
    } catch (err) {
      if (isDomainError(err)) return { now: failure(ready.agent.name, err.message, err.code) };
      throw err;
    }
  },
});

/** The agent to run and the reactor to run it — or the answer when there is nothing to run. */
function prepare(
  ctx: ToolContext,
  a: { agent_name: string },
): { now: Result } | { agent: AgentRow; reactor: RunStarter } {
  const name = a.agent_name.trim().toLowerCase();
  const agent = teamOf(ctx).find((x) => x.name === name);
  if (!agent)
    return { now: { status: 'error', error_code: 'AGENT_NOT_FOUND', message: `Agent '${a.agent_name}' not found.` } };
  const reactor = ctx.runtime.reactor;
  if (!reactor)
    return {
      now: failure(
        agent.name,
        'this Colony process does not run agents (agents run under colony serve)',
        'RuntimeUnavailable',
      ),
    };
  if (ctx.caller.kind === 'agent' && ctx.caller.agentId === agent.agentId)
    return {
      now: failure(agent.name, 'an agent cannot execute itself (it would wait for its own run)', 'SelfExecution'),
    };
  return { agent, reactor };
}

/** What the run is asked: the owner's prompt as it is; an agent's quoted, under its name. */
const promptOf = (ctx: ToolContext, prompt: string): string =>
  ctx.caller.kind === 'agent'
    ? peerExecutePrompt({ agentId: ctx.caller.agentId, name: ctx.caller.name }, prompt)
    : prompt;

const failure = (agent: string, reason: string, type: string): Result => ({
  status: 'error',
  error_code: 'AGENT_EXECUTION_FAILED',
  agent,
  message: `Failed to execute agent ${agent}: ${reason}`,
  error_type: type,
});

/** The run's steps as progress for a client that asked (queued behind a run, started, finished): a run can take minutes. */
const STEPS: Record<string, (runId: number) => string> = {
  RunQueued: (id) => `run ${id} queued`,
  RunStarted: (id) => `run ${id} started`,
  RunFinished: (id) => `run ${id} finished`,
  RunTimedOut: (id) => `run ${id} timed out`,
  RunFailed: (id) => `run ${id} failed`,
  RunRefused: (id) => `run ${id} refused`,
};

/**
 * Only this call's run: other callers' runs of the same agent are none of this caller's business. Its
 * RunQueued is committed while the run is begun, before its id is known, so the steps seen until then are
 * held and the ones of the run it turns out to be are reported.
 */
function reportRunSteps(ctx: ToolContext, agent: AgentRow): { follow(runId: number): void; unsubscribe(): void } {
  let mine: number | null = null;
  const held: { runId: number; type: string }[] = [];
  const say = (runId: number, type: string) => ctx.progress(`${agent.name}: ${STEPS[type]!(runId)}`);
  const subscription = ctx.app.engine.bus.events$.subscribe((e) => {
    const data = e.data as { runId?: number; agentId?: number };
    if (!STEPS[e.type] || data.agentId !== agent.agentId || typeof data.runId !== 'number') return;
    if (mine === null) held.push({ runId: data.runId, type: e.type });
    else if (data.runId === mine) say(mine, e.type);
  });
  return {
    follow(runId) {
      mine = runId;
      for (const step of held.splice(0)) if (step.runId === runId) say(runId, step.type);
    },
    unsubscribe: () => subscription.unsubscribe(),
  };
}

/**
 * What execute_agent answers for a run: the blocking call when it has waited, and `tasks/get` of the
 * run's task once it has ended (src/mcp/tasks/runs.ts) — one function, so both say the same thing.
 */
export function runAnswer(app: App, agent: string, run: RunRow): Result {
  const failed = (reason: string, type: string) => failure(agent, reason, type);
  switch (run.status) {
    case 'refused':
      return failed(`refused by the ${run.gate} gate: ${run.reason}`, 'RunRefused');
    case 'timed_out':
      return failed(`timed out after ${run.timeoutSec}s`, 'TimeoutError');
    case 'queued':
    case 'running':
      return failed(`no answer within the wait limit; run ${run.runId} is still ${run.status}`, 'TimeoutError');
    case 'failed':
      if (run.exitCode === null) return failed(run.reason ?? 'the run failed', 'RunFailed');
      break;
    case 'succeeded':
      break;
  }
  const agentText =
    sessionMessages(app.engine.db, run.runId)
      .filter((m) => m.role === 'agent')
      .at(-1)?.content ?? '';
  return {
    status: run.status === 'succeeded' ? 'success' : 'error',
    agent,
    content: agentText,
    error:
      run.status === 'succeeded'
        ? null
        : `exit code ${run.exitCode}${run.outputTail?.trim() ? `: ${run.outputTail.trim().slice(-500)}` : ''}`,
    metadata: {
      run_id: run.runId,
      session_id: run.sessionId,
      exit_code: run.exitCode,
      tokens_in: run.tokensIn,
      tokens_out: run.tokensOut,
      reported_tokens: run.reportedTokens,
      reported_cents: run.reportedCents,
      wake_source: run.source,
    },
    execution_time: (run.durationMs ?? 0) / 1000,
    tokens_used: run.tokensIn + run.tokensOut + run.reportedTokens,
    cost: (run.costCents + run.reportedCents) / 100,
    request_id: String(run.runId),
    trace_id: run.traceId,
  };
}

const teamOf = (ctx: ToolContext): AgentRow[] =>
  listAgents(ctx.app.engine.db, ctx.caller.kind === 'owner' ? ctx.caller.userId : ctx.caller.ownerId);

export const executeTools: readonly AnyTool[] = [execute];
export { execute as executeTool };
