import { randomBytes } from 'node:crypto';
import type { App } from '../app.js';
import { oauthDecider, type CodeFacts, type DecideAuthorization } from '../commands/oauth.js';
import { DomainError } from '../errors.js';
import {
  oauthApprovalStream,
  oauthClientStream,
  oauthGrantStream,
  type OAuthClientKind,
  type OAuthRevokeReason,
  type OAuthTokenPair,
} from '../events/oauth.js';
import { getOAuthGrant, oauthClientById, oauthGrantsOf, oauthTokenByHash } from '../projections/oauth-queries.js';
import { tokenHash } from '../tokens.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * OAuth's commands, shared by the HTTP endpoints (http/oauth-*.ts) and the CLI (cli/oauth.ts). Each
 * function is one command. Tokens are minted here, returned once, and only their sha256 is logged.
 */
export const ACCESS_TOKEN_TTL_SEC = 3600;
export const REFRESH_TOKEN_TTL_SEC = 30 * 24 * 3600;

/** Opaque, 256 random bits; the prefixes tell people and secret scanners what they hold. */
const mint = (prefix: string): string => `${prefix}${randomBytes(32).toString('base64url')}`;

export interface IssuedTokens {
  grantN: number;
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scope: string;
}

function newPair(now: Date): { accessToken: string; refreshToken: string; pair: OAuthTokenPair } {
  const accessToken = mint('colony_oat_');
  const refreshToken = mint('colony_ort_');
  const at = (sec: number) => new Date(now.getTime() + sec * 1000).toISOString();
  return {
    accessToken,
    refreshToken,
    pair: {
      accessTokenHash: tokenHash(accessToken),
      accessExpiresAt: at(ACCESS_TOKEN_TTL_SEC),
      refreshTokenHash: tokenHash(refreshToken),
      refreshExpiresAt: at(REFRESH_TOKEN_TTL_SEC),
    },
  };
}

export type Decision = Omit<DecideAuthorization, 'type' | 'approvalN'>;

/** Records the owner's decision on a pending request (found later by its user code). */
export function decideAuthorization(app: App, decision: Decision, by: CommandOptions): { approvalN: number } {
  const { engine } = app;
  const r = engine.transact(by, (uow) => {
    const approvalN = uow.ids.next('oauth-approval');
    engine.handle(
      oauthDecider,
      oauthApprovalStream(approvalN),
      { type: 'DecideAuthorization', approvalN, ...decision },
      by,
    );
    return { approvalN };
  });
  return r.value!;
}

export interface ClientInfo {
  clientId: string;
  kind: OAuthClientKind;
  clientName: string;
  redirectUris: string[];
}

/** Redeems a code: logs its client on first use, then the grant with a fresh token pair. */
export function issueGrant(
  app: App,
  client: ClientInfo,
  code: CodeFacts,
  request: { clientId: string; redirectUri: string; codeVerifier: string; resource: string | null },
): IssuedTokens {
  const { engine } = app;
  const by = { actor: clientActor(client.clientId) };
  const tokens = newPair(engine.clock());
  const r = engine.transact(by, (uow) => {
    if (!oauthClientById(engine.db, client.clientId)) {
      const clientN = uow.ids.next('oauth-client');
      engine.handle(
        oauthDecider,
        oauthClientStream(clientN),
        { type: 'RegisterOAuthClient', client: { clientN, ...client } },
        by,
      );
    }
    const grantN = uow.ids.next('oauth-grant');
    engine.handle(
      oauthDecider,
      oauthGrantStream(grantN),
      { type: 'IssueGrant', grantN, code, request, tokens: tokens.pair },
      by,
    );
    return grantN;
  });
  return {
    grantN: r.value!,
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresIn: ACCESS_TOKEN_TTL_SEC,
    scope: code.scopes.join(' '),
  };
}

/** Rotates a grant's tokens. A rotated-out refresh token ends the grant (committed) and is then refused. */
export function refreshGrant(app: App, refreshToken: string, clientId: string, resource: string | null): IssuedTokens {
  const { engine } = app;
  const found = oauthTokenByHash(engine.db, tokenHash(refreshToken));
  if (!found || found.kind !== 'refresh') throw new DomainError('ErrOAuthInvalidGrant', 'unknown refresh token');
  const tokens = newPair(engine.clock());
  const r = engine.handle(
    oauthDecider,
    oauthGrantStream(found.grantN),
    { type: 'RefreshGrant', clientId, presentedRefreshHash: tokenHash(refreshToken), resource, tokens: tokens.pair },
    { actor: clientActor(clientId) },
  );
  if (r.events.some((e) => e.type === 'OAuthGrantRevoked')) {
    throw new DomainError(
      'ErrOAuthInvalidGrant',
      'this refresh token was already used: the grant is revoked (a copy of it is in other hands)',
    );
  }
  const grant = getOAuthGrant(engine.db, found.grantN)!;
  return {
    grantN: found.grantN,
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresIn: ACCESS_TOKEN_TTL_SEC,
    scope: grant.scopes.join(' '),
  };
}

/** Ends a grant; false when it was already ended. */
export function revokeGrant(app: App, grantN: number, reason: OAuthRevokeReason, by: CommandOptions): boolean {
  return (
    app.engine.handle(oauthDecider, oauthGrantStream(grantN), { type: 'RevokeGrant', reason, clientId: null }, by)
      .events.length > 0
  );
}

/** Ends every live grant the tenant gave this client, in one command; returns their numbers. */
export function revokeClientGrants(app: App, ownerId: number, clientId: string, by: CommandOptions): number[] {
  const { engine } = app;
  const live = oauthGrantsOf(engine.db, ownerId, clientId).filter((g) => g.revokedAt === null);
  engine.transact(by, () => {
    for (const g of live)
      engine.handle(
        oauthDecider,
        oauthGrantStream(g.grantN),
        { type: 'RevokeGrant', reason: 'client_revoked', clientId: null },
        by,
      );
  });
  return live.map((g) => g.grantN).sort((a, b) => a - b);
}

/**
 * RFC 7009: a client ends its own grant with either of its tokens. Unknown tokens are not an error (the
 * spec answers 200 either way); a token of another client's grant is (the decider says so).
 */
export function revokeByToken(app: App, token: string, clientId: string): 'revoked' | 'unknown' {
  const found = oauthTokenByHash(app.engine.db, tokenHash(token));
  const grant = found && getOAuthGrant(app.engine.db, found.grantN);
  if (!grant) return 'unknown';
  app.engine.handle(
    oauthDecider,
    oauthGrantStream(grant.grantN),
    { type: 'RevokeGrant', reason: 'client', clientId },
    { actor: clientActor(clientId) },
  );
  return 'revoked';
}

/** The actor recorded for what a client does on its own (redeem, refresh, revoke). */
export const clientActor = (clientId: string): string => `oauth-client:${clientId.slice(0, 200)}`;
