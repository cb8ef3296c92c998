import type { Router } from 'express';
import * as z from 'zod';
import type { App } from '../app.js';
import { log } from '../log.js';
import { readChainAnchor, readLastVerification, recordVerification } from '../engine/last-verify.js';
import type { McpContext } from '../mcp/context.js';
import { projectionStates, verificationView } from '../mcp/views/integrity.js';
import { body, IntParam, ownerOf, parse, speakerOf } from './api-common.js';

/**
 * The log's integrity and the audit trail in the console: the chain's head, the last `colony verify`
 * (as system_health shows it) and each projection's state; `POST /api/verify` walks the whole chain now
 * — held, like `colony verify`, to the head the start-up check verified — and records the outcome in
 * `<data>/last-verify.json`. The audit trail is the owner's own tenant's rows only.
 */
const AuditQuery = z.strictObject({
  tool: z.string().min(1).max(200).optional(),
  principal: z.string().min(1).max(200).optional(),
  outcome: z.enum(['success', 'error', 'blocked', 'pending_confirmation']).optional(),
  after: IntParam(0, Number.MAX_SAFE_INTEGER).optional(),
  limit: IntParam(1, 1000).default(100),
});

/** As system_health shows it, with the number of events the walk checked. */
function lastVerification(app: App) {
  const v = readLastVerification(app.dataDir);
  return { ...verificationView(v), ...(v && v !== 'unreadable' ? { events: v.events } : {}) };
}

export function mountIntegrity(router: Router, ctx: McpContext): void {
  const engine = ctx.app.engine;
  mountAuditTrail(router, ctx);
  router.get('/integrity', (_req, res) => {
    const head = engine.head();
    const projections = projectionStates(engine, head.position);
    res.json({ head, last_verification: lastVerification(ctx.app), projections });
  });
  router.post('/verify', (req, res) => {
    ownerOf(req, 'verifies the log');
    body(z.strictObject({}), req);
    const anchor = readChainAnchor(ctx.app.dataDir);
    const result = engine.verify(
      anchor && anchor !== 'unreadable' ? { expectHead: { position: anchor.position, hash: anchor.hash } } : {},
    );
    try {
      recordVerification(ctx.app.dataDir, result, engine.clock().toISOString());
    } catch (e) {
      log.warn({ err: e }, 'could not record the verification in last-verify.json');
    }
    res.json(
      result.ok
        ? { ok: true, events: result.events, head: result.head }
        : {
            ok: false,
            events: result.events,
            position: result.position,
            reason: result.reason,
            message: result.message,
          },
    );
  });
}

/**
 * The audit trail of tool calls, the owner's tenant's rows only, filtered and paged, newest first: the
 * last `limit` matching rows, or with `after` the first `limit` after that id (AuditLog.query gives both
 * in id order, which `colony audit tail` keeps: a tail ends with the newest line, next to the prompt).
 */
function mountAuditTrail(router: Router, ctx: McpContext): void {
  router.get('/audit', (req, res) => {
    ownerOf(req, 'reads the audit trail');
    const q = parse(AuditQuery, req.query, 'query');
    const rows = ctx.audit.query({
      tenantId: speakerOf(req).tenant,
      tool: q.tool,
      principal: q.principal,
      outcome: q.outcome,
      after: q.after,
      limit: q.limit,
    });
    res.json({
      rows: rows.reverse().map((r) => ({
        id: r.id,
        at: r.at,
        principal: r.principal,
        principal_id: r.principalId,
        tool: r.tool,
        args_digest: r.argsDigest,
        outcome: r.outcome,
        error_code: r.errorCode,
        duration_ms: r.durationMs,
        command_id: r.commandId,
      })),
    });
  });
}
