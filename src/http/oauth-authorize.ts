import type { Request, Router } from 'express';
import type { ClientRegistry } from './oauth-clients.js';
import { mountDecision, settle, viewerOf, type DecisionDeps } from './oauth-decision.js';
import { asOAuthError, OAuthHttpError, type OAuthLimits } from './oauth-errors.js';
import { sendConsentPage, sendErrorPage } from './oauth-page.js';
import { redirectMatches, redirectWith } from './oauth-redirects.js';
import type { PendingRequest } from './oauth-requests.js';

/**
 * The authorization endpoint and the owner's approval. `GET /oauth/authorize` checks the client and its
 * redirect URI first — wrong ones get an error page, never a redirect (RFC 6749 §4.1.2.1: the URI is not
 * known to be the client's) — then everything else, answering the client by redirect; a valid request
 * becomes a pending request (oauth-requests.ts) and the page shows its user code. The owner decides in
 * the console (this page, with their session cookie: a CSRF-checked form) or with `colony oauth approve`
 * from any process (oauth-decision.ts): the decision is an event, and the waiting page's poll of
 * `GET /oauth/authorize/status` finds it in the log and turns it into a code and the redirect.
 */
export interface AuthorizeDeps extends DecisionDeps {
  resource(): string;
  clients: ClientRegistry;
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

  mountDecision(router, d);
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
