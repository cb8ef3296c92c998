import type { Request, Router } from 'express';
import type { Database } from 'better-sqlite3';
import * as z from 'zod';
import { decideAuthorization, revokeClientGrants, revokeGrant } from '../actions/oauth.js';
import { DomainError, notFound } from '../errors.js';
import { normalizeUserCode, type OAuthPrincipal } from '../events/oauth.js';
import type { McpContext } from '../mcp/context.js';
import { getOAuthGrant, oauthGrantsOf } from '../projections/oauth-queries.js';
import { oauthClientViews } from '../projections/oauth-views.js';
import { getAgentByName } from '../projections/principal-queries.js';
import type { OAuthDesk } from './oauth-desk.js';
import { redirectHost } from './oauth-redirects.js';
import type { PendingRequest } from './oauth-requests.js';
import { actor, AgentName, body, Id, ownerOf, parse } from './api-common.js';

/**
 * OAuth in the console (owner only, reads included: who may reach the team's tools is the owner's
 * business alone): an authorization request waiting in this serving process, found by the code its page
 * shows (typed by the owner: the console never lists codes, see below) and decided by the same
 * command as `colony oauth approve|deny` and the authorization page's buttons (the waiting page then sends
 * the application on), and the applications granted access, with their grants, as `colony oauth clients
 * --json` lists them, each revocable. Everything a client supplied (name, id, redirect) is returned as
 * data; the console renders it as text.
 */
/** Typed as people type it (`wxyz2345`), like the CLI; stored as `WXYZ-2345`. */
const Code = z
  .string()
  .max(32)
  .transform(normalizeUserCode)
  .pipe(z.string({ error: 'a code looks like WXYZ-2345' }));
const ApproveBody = z.strictObject({ as: z.string().max(80).optional() });
const ClientId = z.string().min(1).max(2048);

const view = (r: PendingRequest) => ({
  code: r.userCode,
  client_id: r.client.clientId,
  client_name: r.client.clientName,
  client_kind: r.client.kind,
  redirect_host: redirectHost(r.redirectUri),
  scopes: r.scopes,
  created_at: new Date(r.createdAt).toISOString(),
  expires_at: new Date(r.expiresAt).toISOString(),
});

export function mountOAuthApi(router: Router, ctx: McpContext, desk: OAuthDesk): void {
  const { app } = ctx;
  const db = app.engine.db;

  /** The request a path's code names, still undecided; 404 when no page shows it, 409 when a decision already reached it. */
  const undecided = (raw: unknown): PendingRequest => {
    const code = parse(Code, raw, 'code');
    const r = desk.find(code);
    if (!r) throw notFound(`authorization request ${code}`, { code });
    if (r.outcome)
      throw new DomainError('ErrOAuthDecided', `authorization request ${code} was already ${r.outcome.status}`, {
        code,
        status: r.outcome.status,
      });
    return r;
  };
  /** Records the owner's decision — the same command as `colony oauth approve|deny` — and settles the request at once. */
  const decide = (req: Request, r: PendingRequest, ownerId: number, principal: OAuthPrincipal | null): number => {
    const { approvalN } = decideAuthorization(
      app,
      {
        decision: principal ? 'approve' : 'deny',
        userCode: r.userCode,
        via: 'console',
        decidedBy: { kind: 'user', id: ownerId },
        principal,
      },
      actor(req),
    );
    desk.settle(r);
    return approvalN;
  };

  // How many wait, never which: a request is decided by the code its own page shows the owner, typed in,
  // so a look-alike request started by someone else (an agent, another tenant) is never one click away.
  router.get('/oauth/requests', (req, res) => {
    ownerOf(req, 'sees OAuth authorization requests');
    res.json({ waiting: desk.waiting().length });
  });

  router.get('/oauth/requests/:code', (req, res) => {
    ownerOf(req, 'sees OAuth authorization requests');
    res.json(view(undecided(req.params.code)));
  });

  router.post('/oauth/requests/:code/approve', (req, res) => {
    const owner = ownerOf(req, 'approves OAuth applications');
    const { as = 'owner' } = body(ApproveBody, req);
    const r = undecided(req.params.code);
    const approvalN = decide(req, r, owner.userId, principalAs(db, owner.userId, as));
    res.json({ code: r.userCode, status: 'approved', as, approval_id: approvalN });
  });

  router.post('/oauth/requests/:code/deny', (req, res) => {
    const owner = ownerOf(req, 'denies OAuth applications');
    body(z.strictObject({}), req);
    const r = undecided(req.params.code);
    const approvalN = decide(req, r, owner.userId, null);
    res.json({ code: r.userCode, status: 'denied', approval_id: approvalN });
  });

  mountOAuthGrants(router, ctx);
}

/** Whom an approval makes the application act as: the owner, or one of the owner's agents by name. */
function principalAs(db: Database, ownerId: number, as: string): OAuthPrincipal {
  if (as === 'owner') return { kind: 'user', id: ownerId, ownerId };
  const m = /^agent:(.*)$/.exec(as);
  if (!m) throw new DomainError('ErrInvalidInput', 'body.as: owner or agent:NAME', { field: 'body.as' });
  const name = parse(AgentName, m[1], 'body.as');
  const agent = getAgentByName(db, ownerId, name);
  if (!agent) throw notFound(`agent ${name}`, { name });
  return { kind: 'agent', id: agent.agentId, ownerId };
}

/** The applications granted access, with their grants, each revocable by the owner. */
function mountOAuthGrants(router: Router, ctx: McpContext): void {
  const { app } = ctx;
  const db = app.engine.db;
  router.get('/oauth/clients', (req, res) => {
    const owner = ownerOf(req, 'sees OAuth applications');
    res.json({ clients: oauthClientViews(db, owner.userId, app.engine.clock().toISOString()) });
  });

  router.post('/oauth/grants/:id/revoke', (req, res) => {
    const owner = ownerOf(req, 'revokes OAuth grants');
    const id = parse(Id, req.params.id, 'id');
    body(z.strictObject({}), req);
    const grant = getOAuthGrant(db, id);
    if (!grant || grant.ownerId !== owner.userId) throw notFound(`grant ${id}`, { grant_id: id });
    res.json({ grant_id: id, revoked: revokeGrant(app, id, 'owner', actor(req)) });
  });

  router.post('/oauth/clients/:id/revoke', (req, res) => {
    const owner = ownerOf(req, 'revokes OAuth applications');
    const clientId = parse(ClientId, req.params.id, 'id');
    body(z.strictObject({}), req);
    if (oauthGrantsOf(db, owner.userId, clientId).length === 0)
      throw notFound(`client ${clientId}`, { client_id: clientId });
    res.json({ client_id: clientId, revoked_grants: revokeClientGrants(app, owner.userId, clientId, actor(req)) });
  });
}
