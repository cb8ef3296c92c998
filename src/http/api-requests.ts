import type { Router } from 'express';
import * as z from 'zod';
import { rejectRequest } from '../actions/resources.js';
import { fulfilRequest } from '../actions/resources/fulfil.js';
import { resolveScope } from '../actions/secrets.js';
import { MAX_SECRET_BYTES } from '../events/secrets.js';
import type { McpContext } from '../mcp/context.js';
import { requestsOf, type ResourceRequestRow } from '../projections/resources.js';
import { secretsOfScope } from '../projections/secrets.js';
import { actor, body, Id, ownerOf, parse, speakerOf } from './api-common.js';

/**
 * Resource requests in the console (`request_resource`): the tenant's requests by status, and the
 * owner's answers. Fulfilling one seals the value into the request's scope — its requester's agent
 * scope — exactly like `colony secrets set NAME VALUE --scope agent:REQUESTER` (which fulfils it and DMs
 * the requester); the value is never returned, logged or stored unsealed. Rejecting one records the
 * reason and DMs the requester. Also the secret names of a scope.
 */
const ListQuery = z.strictObject({
  status: z.enum(['pending', 'fulfilled', 'rejected', 'revoked']).default('pending'),
});
const FulfilBody = z.strictObject({
  value: z
    .string()
    .min(1)
    .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_SECRET_BYTES, `at most ${MAX_SECRET_BYTES} bytes`),
});
const RejectBody = z.strictObject({ reason: z.string().trim().min(1).max(2000) });
const MAX_LISTED = 200;

/** Where a request's secret goes: the requester's own scope (the narrowest that reaches every task it runs). */
const scopeOf = (r: ResourceRequestRow): string => r.fulfilledScope ?? `agent:${r.requesterName}`;

/** A request as the console and `/api/requests` show it (also in the attention list, api-attention.ts). */
export const requestView = (r: ResourceRequestRow) => ({
  id: r.requestId,
  name: r.name,
  resource_type: r.resourceType,
  reason: r.reason,
  task_id: r.taskId,
  goal_id: r.goalId,
  requester: r.requesterName,
  requester_id: r.requesterAgentId,
  scope: scopeOf(r),
  created_at: r.createdAt,
  status: r.status,
  fulfilled_at: r.fulfilledAt,
});

export function mountRequests(router: Router, ctx: McpContext): void {
  const db = ctx.app.engine.db;
  router.get('/requests', (req, res) => {
    const q = parse(ListQuery, req.query, 'query');
    res.json({ requests: requestsOf(db, speakerOf(req).tenant, q.status, MAX_LISTED).map(requestView) });
  });
  router.post('/requests/:id/fulfil', (req, res) => {
    ownerOf(req, 'fulfils resource requests');
    const id = parse(Id, req.params.id, 'id');
    const { value } = body(FulfilBody, req);
    const r = fulfilRequest(ctx.app, speakerOf(req), id, value, actor(req));
    res.json({ request_id: r.requestId, status: r.status, secret_id: r.secretId });
  });
  router.post('/requests/:id/reject', (req, res) => {
    ownerOf(req, 'rejects resource requests');
    const id = parse(Id, req.params.id, 'id');
    const { reason } = body(RejectBody, req);
    const r = rejectRequest(ctx.app, speakerOf(req), id, reason, actor(req));
    res.json({ request_id: r.requestId, status: r.status });
  });
  router.get('/secrets/:scope_type/:scope_id', (req, res) => {
    ownerOf(req, 'lists secrets');
    const tenant = speakerOf(req).tenant;
    const scope = resolveScope(ctx.app, tenant, `${req.params.scope_type}:${req.params.scope_id}`);
    res.json(
      secretsOfScope(db, tenant, scope).map((s) => ({
        name: s.name,
        available: s.available,
        last_used_at: s.lastUsedAt,
      })),
    );
  });
}
