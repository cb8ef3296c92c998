import { DomainError, invalidInput } from '../errors.js';
import {
  OAUTH_SCOPES,
  USER_CODE,
  type OAuthClientRegistered,
  type OAuthEvent,
  type OAuthPrincipal,
  type OAuthRevokeReason,
  type OAuthScope,
  type OAuthTokenPair,
} from '../events/oauth.js';
import type { DecideContext, Decider } from '../engine/decider.js';
import { evolve, type OAuthState } from './oauth-state.js';
import { pkceMatches } from './pkce.js';

export type { OAuthState } from './oauth-state.js';

/**
 * The OAuth decider, for its three stream kinds (events/oauth.ts). The rules that make a grant safe live
 * here, pure: an agent never approves; the owner grants only themself or one of their own agents; a code
 * is redeemed only by its client, at its redirect URI, before it expires, with the PKCE verifier (S256)
 * that matches its challenge, for the resource it was issued for; a refresh token works once — a rotated
 * one presented again revokes the whole grant (RFC 9700 §4.14.2), which is why that case returns the
 * revocation instead of throwing (a throw would roll it back); a client revokes only its own grants. The
 * code itself lives in the serving process's memory; what it said arrives here as facts (`CodeFacts`),
 * like every other-stream fact.
 */
export interface CodeFacts {
  clientId: string;
  clientName: string;
  redirectUri: string;
  codeChallenge: string;
  expiresAt: string;
  resource: string;
  scopes: OAuthScope[];
  principal: OAuthPrincipal;
  approvalN: number;
}

export type RegisterOAuthClient = { type: 'RegisterOAuthClient'; client: OAuthClientRegistered['data'] };
export type DecideAuthorization = {
  type: 'DecideAuthorization';
  decision: 'approve' | 'deny';
  approvalN: number;
  userCode: string;
  via: 'console' | 'cli';
  /** Who decides: only an owner may; their id is the tenant. */
  decidedBy: { kind: 'user' | 'agent'; id: number };
  principal: OAuthPrincipal | null;
};
export type IssueGrant = {
  type: 'IssueGrant';
  grantN: number;
  code: CodeFacts;
  tokens: OAuthTokenPair;
  request: { clientId: string; redirectUri: string; codeVerifier: string; resource: string | null };
};
export type RefreshGrant = {
  type: 'RefreshGrant';
  clientId: string;
  presentedRefreshHash: string;
  resource: string | null;
  tokens: OAuthTokenPair;
};
/** `clientId`: a client ends a grant itself (RFC 7009) — only a grant issued to it; null: the owner ends it. */
export type RevokeGrant = { type: 'RevokeGrant'; reason: OAuthRevokeReason; clientId: string | null };
export type OAuthCommand = RegisterOAuthClient | DecideAuthorization | IssueGrant | RefreshGrant | RevokeGrant;

const invalidGrant = (message: string) => new DomainError('ErrOAuthInvalidGrant', message);

function decide(command: OAuthCommand, state: OAuthState, ctx: DecideContext): OAuthEvent[] {
  switch (command.type) {
    case 'RegisterOAuthClient':
      if (state.status !== 'absent')
        throw new DomainError('ErrOAuthClientExists', `client ${command.client.clientId} is already registered`);
      return [{ type: 'OAuthClientRegistered', data: checkClient(command.client) }];
    case 'DecideAuthorization':
      return decideAuthorization(command, state);
    case 'IssueGrant':
      return issue(command, state, ctx.now);
    case 'RefreshGrant':
      return refresh(command, state, ctx.now);
    case 'RevokeGrant':
      return revoke(command, state);
    default: {
      const never: never = command;
      return never;
    }
  }
}

function revoke(c: RevokeGrant, state: OAuthState): OAuthEvent[] {
  if (
    (state.status === 'granted' || state.status === 'revoked') &&
    c.clientId !== null &&
    c.clientId !== state.clientId
  )
    throw new DomainError('ErrOAuthUnauthorizedClient', 'this token was issued to another client');
  if (state.status === 'revoked') return [];
  if (state.status !== 'granted') throw new DomainError('ErrNotFound', 'grant not found');
  return [{ type: 'OAuthGrantRevoked', data: { grantN: state.grantN, reason: c.reason } }];
}

function checkClient(c: OAuthClientRegistered['data']): OAuthClientRegistered['data'] {
  if (c.clientId === '' || c.clientId.length > 2048) throw invalidInput('a client id is 1-2048 characters');
  if (c.clientName.length > 200) throw invalidInput('a client name is at most 200 characters');
  if (c.redirectUris.length === 0) throw invalidInput('a client needs at least one redirect URI');
  return c;
}

function decideAuthorization(c: DecideAuthorization, state: OAuthState): OAuthEvent[] {
  if (state.status !== 'absent') throw new DomainError('ErrOAuthDecided', `approval ${c.approvalN} is already decided`);
  if (!USER_CODE.test(c.userCode)) throw invalidInput(`"${c.userCode}" is not a user code (like WXYZ-2345)`);
  // A session or token of an agent may read; deciding who gets access to the team is the owner's alone.
  if (c.decidedBy.kind !== 'user')
    throw new DomainError('ErrForbidden', 'only the owner approves or denies an OAuth client; an agent never does');
  const ownerId = c.decidedBy.id;
  if (c.decision === 'deny')
    return [
      { type: 'OAuthAuthorizationDenied', data: { approvalN: c.approvalN, userCode: c.userCode, ownerId, via: c.via } },
    ];
  const p = c.principal;
  if (!p) throw invalidInput('an approval names who the client acts as');
  if (p.ownerId !== ownerId || (p.kind === 'user' && p.id !== ownerId))
    throw new DomainError('ErrForbidden', 'an owner grants access only as themself or as one of their own agents');
  return [
    {
      type: 'OAuthAuthorizationApproved',
      data: { approvalN: c.approvalN, userCode: c.userCode, principal: p, ownerId, via: c.via },
    },
  ];
}

function issue(c: IssueGrant, state: OAuthState, now: string): OAuthEvent[] {
  if (state.status !== 'absent') throw new DomainError('ErrOAuthGrantExists', `grant ${c.grantN} already exists`);
  const { code, request } = c;
  if (request.clientId !== code.clientId) throw invalidGrant('the code was issued to another client');
  if (request.redirectUri !== code.redirectUri)
    throw invalidGrant('redirect_uri differs from the one the code was issued for');
  if (Date.parse(now) >= Date.parse(code.expiresAt)) throw invalidGrant('the code has expired');
  if (!pkceMatches(request.codeVerifier, code.codeChallenge))
    throw invalidGrant('code_verifier does not match the code_challenge (PKCE S256)');
  if (request.resource !== null && request.resource !== code.resource)
    throw new DomainError('ErrOAuthInvalidTarget', `resource must be ${code.resource}`);
  if (code.scopes.length === 0 || code.scopes.some((s) => !OAUTH_SCOPES.includes(s)))
    throw new DomainError('ErrOAuthInvalidScope', `scopes are a non-empty subset of ${OAUTH_SCOPES.join(' ')}`);
  return [
    {
      type: 'OAuthGrantIssued',
      data: {
        grantN: c.grantN,
        clientId: code.clientId,
        clientName: code.clientName,
        principal: code.principal,
        ownerId: code.principal.ownerId,
        scopes: code.scopes,
        resource: code.resource,
        approvalN: code.approvalN,
        ...c.tokens,
      },
    },
  ];
}

function refresh(c: RefreshGrant, state: OAuthState, now: string): OAuthEvent[] {
  if (state.status === 'revoked') throw invalidGrant('the grant was revoked');
  if (state.status !== 'granted') throw invalidGrant('unknown refresh token');
  // A rotated token shows up again: it was copied. Which copy is the thief's cannot be told, so both end.
  if (c.presentedRefreshHash !== state.refreshHash)
    return [{ type: 'OAuthGrantRevoked', data: { grantN: state.grantN, reason: 'refresh_token_reuse' } }];
  if (c.clientId !== state.clientId) throw invalidGrant('the refresh token was issued to another client');
  if (Date.parse(now) >= Date.parse(state.refreshExpiresAt)) throw invalidGrant('the refresh token has expired');
  if (c.resource !== null && c.resource !== state.resource)
    throw new DomainError('ErrOAuthInvalidTarget', `resource must be ${state.resource}`);
  return [
    {
      type: 'OAuthGrantRefreshed',
      data: { grantN: state.grantN, previousRefreshHash: state.refreshHash, ...c.tokens },
    },
  ];
}

export const oauthDecider: Decider<OAuthState, OAuthCommand, OAuthEvent> = {
  initialState: () => ({ status: 'absent' }),
  evolve,
  decide,
};
