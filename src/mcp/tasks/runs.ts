import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { cancelRun } from '../../actions/runs.js';
import { getAgent } from '../../projections/principal-queries.js';
import { getRun, type RunRow } from '../../projections/run-queries.js';
import { actorOf } from '../auth.js';
import type { McpContext } from '../context.js';
import { tenantOf } from '../resources/access.js';
import { mayReadRunsOf, readableRuns } from '../views/readable.js';
import { okResult } from '../results.js';
import { executeTool, runAnswer } from '../tools/execute.js';
import type { TaskState } from './wire.js';
import { type Caller } from '../../events/principals.js';

/**
 * execute_agent as a task: the run is the task. Its state is the runs projection's row, read on every
 * `tasks/get`: queued or running → working; ended → completed with exactly the CallToolResult the
 * blocking call answers (a failed, timed-out or refused run is execute_agent's codomyrmex-shaped error
 * result, not a JSON-RPC error: SEP-2663 keeps `failed` for protocol faults); cancelled → cancelled.
 */

/** Who asked for the run (`user:<name>` / `agent:<name>`, execute_agent's actor). */
const startedBy = (run: RunRow): string | undefined => run.wakes[0]?.by;

/**
 * The run behind a task, if the caller may see it: an execute_agent run of the caller's tenant that the
 * caller started, or whose transcript it may read anyway (the session tools' rule, `readableBy`: the
 * owner all of the team's, an agent its own and its spawned agents'). Anything else is "not found".
 */
export function visibleRun(ctx: McpContext, caller: Caller, runId: number): RunRow | null {
  const run = getRun(ctx.app.engine.db, runId);
  if (!run || run.source !== 'execute_agent' || run.ownerId !== tenantOf(caller)) return null;
  return startedBy(run) === actorOf(caller) || mayReadRunsOf(readableRuns(ctx, caller), run.agentId) ? run : null;
}

export function runState(ctx: McpContext, run: RunRow): TaskState {
  const agent = getAgent(ctx.app.engine.db, run.agentId)?.name ?? `#${run.agentId}`;
  const what = `run ${run.runId} of ${agent}`;
  const times = { createdAt: run.queuedAt, lastUpdatedAt: run.updatedAt };
  switch (run.status) {
    case 'queued': {
      const why =
        run.queueReason === 'agent_running'
          ? ' behind its current run'
          : run.queueReason === 'cooldown'
            ? ` (cooldown until ${run.notBefore})`
            : '';
      return { status: 'working', statusMessage: `${what} is queued${why}`, ...times };
    }
    case 'running':
      return { status: 'working', statusMessage: `${what} is running (started ${run.startedAt})`, ...times };
    default:
      if (run.cancelledBy)
        return { status: 'cancelled', statusMessage: `${what} was cancelled by ${run.cancelledBy}`, ...times };
      return {
        status: 'completed',
        statusMessage: `${what} ${run.status.replace('_', ' ')}`,
        result: okResult(executeTool, runAnswer(ctx.app, agent, run)),
        ...times,
      };
  }
}

/**
 * tasks/cancel: only whoever started the run, or the owner, stops it — reading a spawned agent's runs
 * is not a right to stop them. The cancel is a fact in the log (RunFailed, cancelledBy); the runtime
 * that holds the process kills it. A run that has already ended stays as it ended (the ack is the same).
 */
export function cancelRunTask(ctx: McpContext, caller: Caller, run: RunRow): void {
  const by = actorOf(caller);
  if (caller.kind !== 'owner' && startedBy(run) !== by) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      `only ${startedBy(run)}, who started run ${run.runId}, or the owner may cancel this task`,
    );
  }
  cancelRun(ctx.app, run.runId, by, { actor: by });
}
