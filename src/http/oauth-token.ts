import express, { type Request, type Router } from 'express';
import type { App } from '../app.js';
import {
  clientActor,
  issueGrant,
  refreshGrant,
  revokeByToken,
  revokeGrant,
  type IssuedTokens,
} from '../actions/oauth.js';
import { OAuthHttpError, type OAuthLimits } from './oauth-errors.js';
import type { AuthCodes } from './oauth-requests.js';

/**
 * `POST /oauth/token` (RFC 6749 §3.2, form-encoded): `authorization_code` with PKCE, and
 * `refresh_token` with rotation — and `POST /oauth/revoke` (RFC 7009). Clients are public: they name
 * themselves with client_id (in the body, or as HTTP Basic with an empty password) and hold no secret.
 * The rules are the decider's (commands/oauth.ts); here: reading the form, the single use of a code
 * (a code presented again revokes the grant it produced), and counting failures per address.
 */
export interface TokenDeps {
  app: App;
  codes: AuthCodes;
  limits: OAuthLimits;
}

const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });

/** The form's fields, each given once (RFC 6749 §3.2: parameters must not repeat); empty values read as absent. */
function fields(req: Request): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries((req.body ?? {}) as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new OAuthHttpError('invalid_request', `${k} appears more than once`);
    out[k] = v === '' ? undefined : v;
  }
  return out;
}

function clientOf(req: Request, body: Record<string, string | undefined>): string {
  const noSecrets = () =>
    new OAuthHttpError(
      'invalid_client',
      'Colony issues no client secrets: send client_id alone (token_endpoint_auth_method none)',
      401,
    );
  let clientId = body.client_id;
  const header = req.headers.authorization;
  if (header !== undefined) {
    const [scheme, value] = header.split(' ');
    const decoded = scheme?.toLowerCase() === 'basic' && value ? Buffer.from(value, 'base64').toString('utf8') : null;
    const colon = decoded?.indexOf(':') ?? -1;
    if (decoded === null || colon < 0 || decoded.slice(colon + 1) !== '') throw noSecrets();
    const named = safeDecode(decoded.slice(0, colon));
    if (clientId !== undefined && clientId !== named)
      throw new OAuthHttpError('invalid_request', 'two different client ids');
    clientId = named;
  }
  if (body.client_secret !== undefined) throw noSecrets();
  if (!clientId) throw new OAuthHttpError('invalid_request', 'client_id is missing');
  return clientId;
}

/** RFC 6749 §2.3.1 form-encodes the Basic user name; a malformed one is no client. */
function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    throw new OAuthHttpError('invalid_client', 'the Basic credentials are malformed', 401);
  }
}

function redeem(d: TokenDeps, body: Record<string, string | undefined>, clientId: string): IssuedTokens {
  if (!body.code) throw new OAuthHttpError('invalid_request', 'code is missing');
  if (!body.code_verifier) throw new OAuthHttpError('invalid_request', 'code_verifier is missing (PKCE is required)');
  const entry = d.codes.take(body.code);
  if (!entry) throw new OAuthHttpError('invalid_grant', 'unknown or expired code');
  if (entry.used) {
    // Someone replays a code: the first redemption may have been the attacker's, so its grant ends (RFC 6749 §4.1.2).
    if (entry.grantN !== null) revokeGrant(d.app, entry.grantN, 'code_reuse', { actor: clientActor(clientId) });
    throw new OAuthHttpError('invalid_grant', 'this code was already used: the grant it produced is revoked');
  }
  // A request that named its redirect_uri must name it again; one that relied on the only registered URI may omit it.
  const redirectUri = body.redirect_uri ?? (entry.redirectUriGiven ? '' : entry.facts.redirectUri);
  const issued = issueGrant(d.app, entry.client, entry.facts, {
    clientId,
    redirectUri,
    codeVerifier: body.code_verifier,
    resource: body.resource ?? null,
  });
  d.codes.redeemed(body.code, issued.grantN);
  return issued;
}

function refresh(d: TokenDeps, body: Record<string, string | undefined>, clientId: string): IssuedTokens {
  if (!body.refresh_token) throw new OAuthHttpError('invalid_request', 'refresh_token is missing');
  if (body.scope !== undefined && body.scope.split(' ').some((s) => s !== 'mcp'))
    throw new OAuthHttpError('invalid_scope', 'a refresh cannot widen the grant: its scope is mcp');
  return refreshGrant(d.app, body.refresh_token, clientId, body.resource ?? null);
}

export function mountToken(router: Router, d: TokenDeps): void {
  router.post('/oauth/token', form, (req, res) => {
    const named = typeof req.body?.client_id === 'string' ? (req.body.client_id as string).slice(0, 2048) : undefined;
    d.limits.token.check(req, named);
    let issued: IssuedTokens;
    try {
      const body = fields(req);
      const clientId = clientOf(req, body);
      if (body.grant_type === 'authorization_code') issued = redeem(d, body, clientId);
      else if (body.grant_type === 'refresh_token') issued = refresh(d, body, clientId);
      else throw new OAuthHttpError('unsupported_grant_type', 'grant_type is authorization_code or refresh_token');
    } catch (e) {
      d.limits.token.count(req, named);
      throw e;
    }
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json({
      access_token: issued.accessToken,
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      scope: issued.scope,
      refresh_token: issued.refreshToken,
    });
  });

  router.post('/oauth/revoke', form, (req, res) => {
    d.limits.token.check(req);
    try {
      const body = fields(req);
      const clientId = clientOf(req, body);
      if (!body.token) throw new OAuthHttpError('invalid_request', 'token is missing');
      revokeByToken(d.app, body.token, clientId);
    } catch (e) {
      d.limits.token.count(req);
      throw e;
    }
    res.set('Cache-Control', 'no-store').status(200).end();
  });
}
