import express, { type Request, type Router } from 'express';
import type { App } from '../app.js';
import { decideAuthorization } from '../actions/oauth.js';
import type { OAuthPrincipal } from '../events/oauth.js';
import { actorOf, callerOfHash, principalKey } from '../mcp/auth.js';
import { decisionFor } from '../projections/oauth-queries.js';
import { getAgent, listAgents } from '../projections/principals.js';
import type { ClientRegistry } from './oauth-clients.js';
import { asOAuthError, OAuthHttpError, type OAuthLimits } from './oauth-errors.js';
import { sendConsentPage, sendErrorPage, type Viewer } from './oauth-page.js';
import { redirectMatches, redirectWith } from './oauth-redirects.js';
import type { AuthCodes, PendingRequest, PendingRequests } from './oauth-requests.js';
import { crossOrigin, csrfMatches, sessionCookie, type Session, type SessionStore } from './session.js';
import { type Caller } from '../events/principals.js';

/**
 * The authorization endpoint and the owner's approval. `GET /oauth/authorize` checks the client and its
 * redirect URI first — wrong ones get an error page, never a redirect (RFC 6749 §4.1.2.1: the URI is not
 * known to be the client's) — then everything else, answering the client by redirect; a valid request
 * becomes a pending request (oauth-requests.ts) and the page shows its user code. The owner decides in
 * the console (this page, with their session cookie: a CSRF-checked form) or with `colony oauth approve`
 * from any process: the decision is an event, and the waiting page's poll of
 * `GET /oauth/authorize/status` finds it in the log and turns it into a code and the redirect.
 */
export interface AuthorizeDeps {
  app: App;
  issuer(): string;
  resource(): string;
  clients: ClientRegistry;
  requests: PendingRequests;
  codes: AuthCodes;
  sessions: SessionStore | null;
  limits: OAuthLimits;
}

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** A query parameter given once, or undefined; twice is an error (RFC 6749 §3.1). */
function param(req: Request, name: string): string | undefined {
  const v = req.query[name];
  if (v === undefined || typeof v === 'string') return v;
  throw new OAuthHttpError('invalid_request', `${name} appears more than once`);
}

export function mountAuthorize(router: Router, d: AuthorizeDeps): void {
  router.get('/oauth/authorize', async (req, res) => {
    let back: ((error: string, description: string) => void) | null = null;
    try {
      // Every request counts, refused ones too: a metadata-document client_id makes Colony fetch a URL.
      d.limits.authorize.check(req);
      d.limits.authorize.count(req);
      const clientId = param(req, 'client_id');
      if (!clientId) throw new OAuthHttpError('invalid_request', 'client_id is missing');
      const client = await d.clients.resolve(clientId);
      const given = param(req, 'redirect_uri');
      if (given === undefined && client.redirectUris.length !== 1)
        throw new OAuthHttpError('invalid_request', 'redirect_uri is missing');
      const redirectUri = given ?? client.redirectUris[0]!;
      if (!client.redirectUris.some((r) => redirectMatches(r, redirectUri)))
        throw new OAuthHttpError('invalid_request', 'redirect_uri is not one this client registered');
      const state = param(req, 'state') ?? null;
      // From here the redirect URI is the client's own: errors go back to it.
      back = (error, description) =>
        res.redirect(302, redirectWith(redirectUri, { error, error_description: description }, state, d.issuer()));
      const request = checkRequest(req, d.resource());
      const pending = d.requests.create({
        client,
        redirectUri,
        redirectUriGiven: given !== undefined,
        state,
        ...request,
        afterPosition: d.app.engine.head().position,
      });
      sendConsentPage(res, pending, viewerOf(req, d));
    } catch (err) {
      const e = asOAuthError(err);
      if (back && e.status < 500) return back(e.error, e.description);
      if (e.retryAfter > 0) res.setHeader('Retry-After', String(e.retryAfter));
      sendErrorPage(res, e.status, e.description);
    }
  });

  router.get('/oauth/authorize/status', (req, res) => {
    res.set('Cache-Control', 'no-store');
    const pending = typeof req.query.request === 'string' ? d.requests.get(req.query.request) : null;
    if (!pending) return void res.status(404).json({ status: 'expired' });
    settle(d, pending);
    res.json(pending.outcome ?? { status: 'pending' });
  });

  router.post(
    '/oauth/authorize/decision',
    express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 }),
    (req, res) => {
      try {
        const { caller, session } = ownerSession(req, d);
        const body = (req.body ?? {}) as Record<string, unknown>;
        if (!csrfMatches(typeof body.csrf === 'string' ? body.csrf : undefined, session.csrf))
          throw new OAuthHttpError('access_denied', 'the form is stale or forged (CSRF): reload the page', 403);
        const pending = typeof body.request === 'string' ? d.requests.get(body.request) : null;
        if (!pending)
          throw new OAuthHttpError(
            'invalid_request',
            'this authorization request has expired: start again from the application',
          );
        if (!pending.outcome) {
          const decision = body.decision === 'approve' ? 'approve' : body.decision === 'deny' ? 'deny' : null;
          if (!decision) throw new OAuthHttpError('invalid_request', 'approve or deny');
          const principal = decision === 'approve' ? principalFor(d.app, caller, body.as) : null;
          decideAuthorization(
            d.app,
            {
              decision,
              userCode: pending.userCode,
              via: 'console',
              decidedBy: { kind: 'user', id: caller.userId },
              principal,
            },
            { actor: actorOf(caller) },
          );
          settle(d, pending);
        }
        res.redirect(303, pending.outcome!.redirect);
      } catch (err) {
        const e = asOAuthError(err);
        sendErrorPage(res, e.status, e.description);
      }
    },
  );
}

/** What is wrong with an authorization request once its client and redirect are known; else its PKCE challenge, resource and scopes. */
function checkRequest(req: Request, resource: string): Pick<PendingRequest, 'codeChallenge' | 'resource' | 'scopes'> {
  for (const [k, v] of Object.entries(req.query))
    if (typeof v !== 'string') throw new OAuthHttpError('invalid_request', `${k} appears more than once`);
  if (param(req, 'response_type') !== 'code')
    throw new OAuthHttpError('unsupported_response_type', 'response_type must be code');
  if (param(req, 'code_challenge_method') !== 'S256')
    throw new OAuthHttpError('invalid_request', 'PKCE is required with code_challenge_method S256 (plain is refused)');
  const codeChallenge = param(req, 'code_challenge') ?? '';
  if (!CHALLENGE.test(codeChallenge))
    throw new OAuthHttpError('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
  const asked = param(req, 'resource');
  if (asked !== undefined && asked !== resource)
    throw new OAuthHttpError('invalid_target', `resource must be ${resource}`);
  // Colony has one scope; a client asking for others (openid, offline_access…) gets what there is, and the token says so.
  return { codeChallenge, resource, scopes: ['mcp'] };
}

/** The signed-in console user of this browser, if any (the session re-authenticated through its token's hash). */
function consoleCaller(req: Request, d: AuthorizeDeps): { caller: Caller; session: Session } | null {
  const id = sessionCookie(req);
  const session = id && d.sessions ? d.sessions.find(id) : null;
  const caller = session ? callerOfHash(d.app, session.tokenHash) : null;
  return caller && session && principalKey(caller) === session.principal ? { caller, session } : null;
}

function viewerOf(req: Request, d: AuthorizeDeps): Viewer {
  const signed = consoleCaller(req, d);
  if (!signed) return null;
  const { caller, session } = signed;
  if (caller.kind === 'agent') return { kind: 'agent', name: caller.name };
  const agents = listAgents(d.app.engine.db, caller.userId).map((a) => ({ agentId: a.agentId, name: a.name }));
  return { kind: 'owner', name: caller.name, csrf: session.csrf, agents };
}

function ownerSession(
  req: Request,
  d: AuthorizeDeps,
): { caller: Extract<Caller, { kind: 'owner' }>; session: Session } {
  if (crossOrigin(req))
    throw new OAuthHttpError('access_denied', 'a decision posted from another origin is refused', 403);
  const signed = consoleCaller(req, d);
  if (!signed)
    throw new OAuthHttpError(
      'access_denied',
      'sign in to the console as the owner first (or use colony oauth approve)',
      401,
    );
  if (signed.caller.kind !== 'owner')
    throw new OAuthHttpError(
      'access_denied',
      `agent ${signed.caller.name} may not approve applications: only the owner does`,
      403,
    );
  return { caller: signed.caller, session: signed.session };
}

function principalFor(app: App, owner: Extract<Caller, { kind: 'owner' }>, as: unknown): OAuthPrincipal {
  if (as === undefined || as === 'owner') return { kind: 'user', id: owner.userId, ownerId: owner.userId };
  const m = typeof as === 'string' ? /^agent:(\d+)$/.exec(as) : null;
  const agent = m ? getAgent(app.engine.db, Number(m[1])) : null;
  if (!agent || agent.ownerId !== owner.userId)
    throw new OAuthHttpError('invalid_request', 'act as yourself or as one of your agents');
  return { kind: 'agent', id: agent.agentId, ownerId: owner.userId };
}

/** Turns the owner's decision, once it is in the log (whoever wrote it), into the redirect the page follows. */
export function settle(d: Pick<AuthorizeDeps, 'app' | 'codes' | 'issuer'>, r: PendingRequest): void {
  if (r.outcome) return;
  const decision = decisionFor(d.app.engine.db, r.userCode, r.afterPosition);
  if (!decision) return;
  if (decision.decision === 'denied') {
    r.outcome = {
      status: 'denied',
      redirect: redirectWith(
        r.redirectUri,
        { error: 'access_denied', error_description: 'the owner denied access' },
        r.state,
        d.issuer(),
      ),
    };
    return;
  }
  const principal: OAuthPrincipal = {
    kind: decision.principalKind!,
    id: decision.principalId!,
    ownerId: decision.ownerId,
  };
  const code = d.codes.issue(
    {
      clientId: r.client.clientId,
      clientName: r.client.clientName,
      redirectUri: r.redirectUri,
      codeChallenge: r.codeChallenge,
      resource: r.resource,
      scopes: r.scopes,
      principal,
      approvalN: decision.approvalN,
    },
    r.client,
    r.redirectUriGiven,
  );
  r.outcome = { status: 'approved', redirect: redirectWith(r.redirectUri, { code }, r.state, d.issuer()) };
}
