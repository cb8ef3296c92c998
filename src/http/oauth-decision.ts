import express, { type Request, type Router } from 'express';
import type { App } from '../app.js';
import { decideAuthorization } from '../actions/oauth.js';
import type { OAuthPrincipal } from '../events/oauth.js';
import { actorOf, callerOfHash, principalKey } from '../mcp/auth.js';
import { decisionFor } from '../projections/oauth-queries.js';
import { getAgent, listAgents } from '../projections/principal-queries.js';
import { asOAuthError, OAuthHttpError } from './oauth-errors.js';
import { sendErrorPage, type Viewer } from './oauth-page.js';
import { redirectWith } from './oauth-redirects.js';
import type { AuthCodes, PendingRequest, PendingRequests } from './oauth-requests.js';
import { crossOrigin, csrfMatches, sessionCookie, type Session, type SessionStore } from './session.js';
import { type Caller } from '../events/principals.js';

/**
 * The owner's decision on an authorization request, and how it reaches the waiting page. In the console
 * the owner decides on the authorization page itself (signed in with their session cookie: a form,
 * CSRF-checked and refused from another origin); `colony oauth approve` decides from any process. Either
 * way the decision is an event in the log, and `settle` turns it into a code and the redirect the page
 * follows.
 */
export interface DecisionDeps {
  app: App;
  issuer(): string;
  requests: PendingRequests;
  codes: AuthCodes;
  sessions: SessionStore | null;
}

export function mountDecision(router: Router, d: DecisionDeps): void {
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

/** The signed-in console user of this browser, if any (the session re-authenticated through its token's hash). */
function consoleCaller(
  req: Request,
  d: Pick<DecisionDeps, 'app' | 'sessions'>,
): { caller: Caller; session: Session } | null {
  const id = sessionCookie(req);
  const session = id && d.sessions ? d.sessions.find(id) : null;
  const caller = session ? callerOfHash(d.app, session.tokenHash) : null;
  return caller && session && principalKey(caller) === session.principal ? { caller, session } : null;
}

export function viewerOf(req: Request, d: Pick<DecisionDeps, 'app' | 'sessions'>): Viewer {
  const signed = consoleCaller(req, d);
  if (!signed) return null;
  const { caller, session } = signed;
  if (caller.kind === 'agent') return { kind: 'agent', name: caller.name };
  const agents = listAgents(d.app.engine.db, caller.userId).map((a) => ({ agentId: a.agentId, name: a.name }));
  return { kind: 'owner', name: caller.name, csrf: session.csrf, agents };
}

function ownerSession(
  req: Request,
  d: Pick<DecisionDeps, 'app' | 'sessions'>,
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
export function settle(d: Pick<DecisionDeps, 'app' | 'codes' | 'issuer'>, r: PendingRequest): void {
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
