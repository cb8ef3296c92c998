import { readConsistent } from '../../engine/db.js';
import { getAgent } from '../../projections/principal-queries.js';
import { getRun, type RunRow } from '../../projections/run-queries.js';
import { lastSessionMessages } from '../../projections/session-message-queries.js';
import { agentView } from '../../projections/session-queries.js';
import type { McpContext } from '../context.js';
import { displayTurn, NO_PROJECT, transcriptText } from '../views/session-text.js';
import { mayReadRunsOf, readableRuns } from '../views/readable.js';
import { resourceNotFound, tenantOf } from './access.js';
import { agentUri, runTranscriptUri, runUri } from './uris.js';
import { type Caller } from '../../events/principals.js';

/**
 * colony://runs/{id} and colony://runs/{id}/transcript, readable exactly where `GET /api/runs/:id` and
 * the session tools allow: the run's tenant, and an agent only its own runs and those of the agents it
 * spawned (their wake prompts hold DMs and system prompts). Everything else is "not found". The
 * transcript is session_read's text of the run's session (same renderer, same 3000-character cut per
 * turn), its last TRANSCRIPT_TURNS messages. Output tails were masked of secrets when recorded.
 */
export const TRANSCRIPT_TURNS = 100;

function readableRun(ctx: McpContext, caller: Caller, runId: number, uri: string): RunRow {
  const run = getRun(ctx.app.engine.db, runId);
  if (!run || run.ownerId !== tenantOf(caller) || !mayReadRunsOf(readableRuns(ctx, caller), run.agentId))
    throw resourceNotFound(uri);
  return run;
}

export function runResource(ctx: McpContext, caller: Caller, runId: number) {
  const db = ctx.app.engine.db;
  return readConsistent(db, () => {
    const r = readableRun(ctx, caller, runId, runUri(runId));
    const agent = getAgent(db, r.agentId)?.name ?? null;
    return {
      run: {
        id: r.runId,
        agent_id: r.agentId,
        agent,
        session_id: r.sessionId,
        status: r.status,
        source: r.source,
        task_id: r.taskId,
        goal_id: r.goalId,
        depth: r.depth,
        gate: r.gate,
        reason: r.reason,
        queue_reason: r.queueReason,
        queued_at: r.queuedAt,
        started_at: r.startedAt,
        finished_at: r.finishedAt,
        duration_ms: r.durationMs,
        timeout_sec: r.timeoutSec,
        timed_out: r.timedOut,
        exit_code: r.exitCode,
        signal: r.signal,
        limit_hit: r.limitHit,
        tokens_in: r.tokensIn,
        tokens_out: r.tokensOut,
        cost_cents: r.costCents,
        reported_tokens: r.reportedTokens,
        reported_cents: r.reportedCents,
        config_hash: r.configHash,
        trace_id: r.traceId,
        output_tail: r.outputTail,
        // Who woke it and why, without the prompt text: the transcript's first message is the prompt it got.
        wakes: r.wakes.map((w) => ({ source: w.source, by: w.by, message_ids: w.messageIds })),
      },
      links: { transcript: runTranscriptUri(r.runId), ...(agent ? { agent: agentUri(agent) } : {}) },
    };
  });
}

export function runTranscriptResource(ctx: McpContext, caller: Caller, runId: number): string {
  const db = ctx.app.engine.db;
  return readConsistent(db, () => {
    const r = readableRun(ctx, caller, runId, runTranscriptUri(runId));
    const view = agentView(db, r.ownerId, r.agentId);
    const agent = { agent_id: r.agentId, name: view?.name ?? `#${r.agentId}`, project: view?.project ?? NO_PROJECT };
    const base = { identifier: String(runId), agent, run_id: r.runId };
    // A refused run never got a session (session_read's "never run" text would be wrong about its agent).
    if (r.sessionId === null)
      return `# Run ${r.runId}: no transcript\nThe run was ${r.status}${r.gate ? ` by the ${r.gate} gate` : ''} before it started, so it has no session.\n`;
    const { messages, total } = lastSessionMessages(db, r.runId, TRANSCRIPT_TURNS);
    return transcriptText({
      ...base,
      result: total === 0 ? 'no_messages' : 'found',
      session_id: r.sessionId,
      total,
      messages: messages.map((m) => {
        const shown = displayTurn(m.content, m.truncated);
        return {
          seq: m.seq,
          role: m.role,
          at: m.at,
          content: shown.content,
          truncated: shown.truncated,
          capped: m.truncated,
          bytes: m.bytes,
        };
      }),
    });
  });
}
