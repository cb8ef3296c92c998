import * as z from 'zod';
import { isDomainError } from '../../errors.js';
import { listAgents, type AgentRow } from '../../projections/principals.js';
import { sessionMessages, type RunRow } from '../../projections/run-queries.js';
import { defineTool, type AnyTool, type ToolContext } from '../tool.js';

/**
 * codomyrmex's execute_agent (seed 004, reference §2.3) on Colony's runtime: the named agent of your
 * team runs now — a real run with its session, gates and budget, queued behind its current run if it
 * has one — and the call waits for its end. Result shapes are codomyrmex's: the response object
 * (status "success" when the process exited 0, "error" with `error` set when it exited otherwise), or
 * `{"status":"error","error_code":"AGENT_NOT_FOUND"|"AGENT_EXECUTION_FAILED",…}` when no run could
 * give an answer (unknown agent, no backend, a gate refused, it could not start, it timed out).
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
  description: 'Runs one of your team\'s agents now with this prompt and waits for it to finish (within its run timeout, default 15 min). The run is a real Colony run: its process gets the prompt on stdin, its session is recorded (session_read), its usage counts. Returns {"status":"success"|"error","agent","content" (the agent\'s answer),"error","metadata" (run_id, session_id, exit_code, tokens_in, tokens_out, reported_tokens, reported_cents),"execution_time" (s),"tokens_used","cost" (USD),"request_id" (the run id),"trace_id"}. When no answer can come back: {"status":"error","error_code":"AGENT_NOT_FOUND","message"} or {"status":"error","error_code":"AGENT_EXECUTION_FAILED","agent","message","error_type"} (no backend command, refused by a gate such as quarantine or a paused goal, could not start, timed out, or this process does not run agents).',
  trust: 'elevated',
  surface: 'agent',
  module: 'runtime',
  input: z.strictObject({
    agent_name: z.string().max(200).describe('The agent\'s name (matched case-insensitively after trimming)'),
    prompt: z.string().max(100_000).describe('What the agent should do: its stdin after its system prompt'),
  }),
  output: Result,
  async handler(ctx, a) {
    const name = a.agent_name.trim().toLowerCase();
    const agent = teamOf(ctx).find((x) => x.name === name);
    if (!agent) return { status: 'error' as const, error_code: 'AGENT_NOT_FOUND' as const, message: `Agent '${a.agent_name}' not found.` };
    const failed = (reason: string, type: string): Result =>
      ({ status: 'error', error_code: 'AGENT_EXECUTION_FAILED', agent: agent.name, message: `Failed to execute agent ${agent.name}: ${reason}`, error_type: type });
    const reactor = ctx.runtime.reactor;
    if (!reactor) return failed('this Colony process does not run agents (agents run under colony serve)', 'RuntimeUnavailable');
    if (ctx.caller.kind === 'agent' && ctx.caller.agentId === agent.agentId) return failed('an agent cannot execute itself (it would wait for its own run)', 'SelfExecution');
    let run: RunRow;
    const steps = reportRunSteps(ctx, agent);
    try {
      run = await reactor.execute(agent.agentId, a.prompt, ctx.command.actor);
    } catch (err) {
      if (isDomainError(err)) return failed(err.message, err.code);
      throw err;
    } finally {
      steps.unsubscribe();
    }
    return answer(ctx, agent, run, failed);
  },
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

function reportRunSteps(ctx: ToolContext, agent: AgentRow): { unsubscribe(): void } {
  return ctx.app.engine.bus.events$.subscribe((e) => {
    const step = STEPS[e.type];
    const data = e.data as { runId?: number; agentId?: number };
    if (step && data.agentId === agent.agentId && typeof data.runId === 'number') ctx.progress(`${agent.name}: ${step(data.runId)}`);
  });
}

function answer(ctx: ToolContext, agent: AgentRow, run: RunRow, failed: (reason: string, type: string) => Result): Result {
  switch (run.status) {
    case 'refused': return failed(`refused by the ${run.gate} gate: ${run.reason}`, 'RunRefused');
    case 'timed_out': return failed(`timed out after ${run.timeoutSec}s`, 'TimeoutError');
    case 'queued': case 'running': return failed(`no answer within the wait limit; run ${run.runId} is still ${run.status}`, 'TimeoutError');
    case 'failed':
      if (run.exitCode === null) return failed(run.reason ?? 'the run failed', 'RunFailed');
      break;
    case 'succeeded': break;
  }
  const agentText = sessionMessages(ctx.app.engine.db, run.runId).filter((m) => m.role === 'agent').at(-1)?.content ?? '';
  return {
    status: run.status === 'succeeded' ? 'success' : 'error',
    agent: agent.name,
    content: agentText,
    error: run.status === 'succeeded' ? null : `exit code ${run.exitCode}${run.outputTail?.trim() ? `: ${run.outputTail.trim().slice(-500)}` : ''}`,
    metadata: {
      run_id: run.runId, session_id: run.sessionId, exit_code: run.exitCode, tokens_in: run.tokensIn, tokens_out: run.tokensOut,
      reported_tokens: run.reportedTokens, reported_cents: run.reportedCents, wake_source: run.source,
    },
    execution_time: (run.durationMs ?? 0) / 1000,
    tokens_used: run.tokensIn + run.tokensOut + run.reportedTokens,
    cost: (run.costCents + run.reportedCents) / 100,
    request_id: String(run.runId),
    trace_id: run.traceId,
  };
}

const teamOf = (ctx: ToolContext): AgentRow[] => listAgents(ctx.app.engine.db, ctx.caller.kind === 'owner' ? ctx.caller.userId : ctx.caller.ownerId);

export const executeTools: readonly AnyTool[] = [execute];
