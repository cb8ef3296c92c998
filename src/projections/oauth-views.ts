import type { Database } from 'better-sqlite3';
import { oauthClientsOf, oauthGrantsOf, type OAuthGrantRow } from './oauth-queries.js';
import { getAgent } from './principal-queries.js';

/**
 * The applications a tenant granted access to, each with its grants — one shape for `colony oauth
 * clients --json` and the console's `GET /api/oauth/clients`, so the two never disagree. `now` is the
 * engine clock's ISO time: a grant past its refresh token's expiry is `expired` (no event marks it).
 */
export type OAuthGrantStatus = 'active' | 'expired' | 'revoked';

export function oauthClientViews(db: Database, ownerId: number, now: string) {
  const as = (g: OAuthGrantRow) =>
    g.principalKind === 'user' ? 'owner' : `agent:${getAgent(db, g.principalId)?.name ?? g.principalId}`;
  const status = (g: OAuthGrantRow): OAuthGrantStatus =>
    g.revokedAt ? 'revoked' : g.refreshExpiresAt <= now ? 'expired' : 'active';
  return oauthClientsOf(db, ownerId).map((c) => {
    const grants = oauthGrantsOf(db, ownerId, c.clientId).map((g) => ({
      grant_id: g.grantN,
      as: as(g),
      scopes: g.scopes,
      issued_at: g.issuedAt,
      refreshed_at: g.refreshedAt,
      refresh_count: g.refreshCount,
      access_expires_at: g.accessExpiresAt,
      refresh_expires_at: g.refreshExpiresAt,
      status: status(g),
      revoked_at: g.revokedAt,
      revoke_reason: g.revokeReason,
    }));
    return {
      client_id: c.clientId,
      client_name: c.clientName,
      kind: c.kind,
      registered_at: c.registeredAt,
      redirect_uris: c.redirectUris,
      status: grants.some((g) => g.status === 'active') ? ('active' as const) : ('no live grant' as const),
      grants,
    };
  });
}

export type OAuthClientView = ReturnType<typeof oauthClientViews>[number];
