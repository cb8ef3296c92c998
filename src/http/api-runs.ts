import type { Router } from 'express';
import { DomainError } from '../errors.js';
import type { McpContext } from '../mcp/context.js';
import { mayReadRunsOf, readableBy } from '../mcp/views/readable.js';
import { getAgent } from '../projections/principal-queries.js';
import { getRun } from '../projections/run-queries.js';
import { sessionMessages } from '../projections/session-message-queries.js';
import { runSummary } from './api-agent-views.js';
import { callerOf, Id, parse, speakerOf } from './api-common.js';

/**
 * One run with its transcript in the console — only for those who may read that agent's sessions (the
 * session tools' rule, mcp/views/readable.ts: the owner; an agent itself and the agents it spawned).
 * Everyone else, and another tenant, gets 404, which says nothing about whether the run exists.
 */
export function mountRuns(router: Router, ctx: McpContext): void {
  const db = ctx.app.engine.db;
  router.get('/runs/:id', (req, res) => {
    const id = parse(Id, req.params.id, 'id');
    const run = getRun(db, id);
    const readable = readableBy({ app: ctx.app, caller: callerOf(req) });
    if (!run || run.ownerId !== speakerOf(req).tenant || !mayReadRunsOf(readable, run.agentId)) {
      throw new DomainError('ErrNotFound', `run ${id} not found`, { run_id: id });
    }
    res.json({
      run: {
        ...runSummary(run),
        agent_id: run.agentId,
        agent: getAgent(db, run.agentId)?.name ?? null,
        session_id: run.sessionId,
        depth: run.depth,
        queue_reason: run.queueReason,
        queued_at: run.queuedAt,
        finished_at: run.finishedAt,
        config_hash: run.configHash,
        timed_out: run.timedOut,
        exit_code: run.exitCode,
        signal: run.signal,
        output_tail: run.outputTail,
        trace_id: run.traceId,
        wakes: run.wakes.map((w) => ({ source: w.source, by: w.by, prompt: w.prompt, message_ids: w.messageIds })),
      },
      transcript: sessionMessages(db, run.runId).map((m) => ({
        seq: m.seq,
        role: m.role,
        at: m.at,
        content: m.content,
        truncated: m.truncated,
      })),
    });
  });
}
