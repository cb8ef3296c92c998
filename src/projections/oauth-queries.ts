import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import type { OAuthClientKind, OAuthRevokeReason, OAuthScope } from '../events/oauth.js';

/** Reads of the oauth projection (projections/oauth.ts). */
export interface OAuthClientRow {
  clientN: number;
  clientId: string;
  kind: OAuthClientKind;
  clientName: string;
  redirectUris: string[];
  registeredAt: string;
}
export interface OAuthGrantRow {
  grantN: number;
  clientId: string;
  clientName: string;
  principalKind: 'user' | 'agent';
  principalId: number;
  ownerId: number;
  scopes: OAuthScope[];
  resource: string;
  approvalN: number;
  issuedAt: string;
  accessExpiresAt: string;
  refreshExpiresAt: string;
  refreshedAt: string | null;
  refreshCount: number;
  revokedAt: string | null;
  revokeReason: OAuthRevokeReason | null;
}
export interface OAuthDecisionRow {
  approvalN: number;
  userCode: string;
  decision: 'approved' | 'denied';
  principalKind: 'user' | 'agent' | null;
  principalId: number | null;
  ownerId: number;
  position: number;
}

const CLIENT = `SELECT client_n AS clientN, client_id AS clientId, kind, client_name AS clientName, redirect_uris AS redirectUris,
  registered_at AS registeredAt FROM oauth_clients`;
const GRANT_COLUMNS = `g.grant_n AS grantN, g.client_id AS clientId, g.client_name AS clientName, g.principal_kind AS principalKind,
  g.principal_id AS principalId, g.owner_id AS ownerId, g.scopes, g.resource, g.approval_n AS approvalN, g.issued_at AS issuedAt,
  g.access_expires_at AS accessExpiresAt, g.refresh_expires_at AS refreshExpiresAt, g.refreshed_at AS refreshedAt, g.refresh_count AS refreshCount,
  g.revoked_at AS revokedAt, g.revoke_reason AS revokeReason`;
const GRANT = `SELECT ${GRANT_COLUMNS} FROM oauth_grants g`;

const toClient = (r: unknown): OAuthClientRow | null =>
  r
    ? { ...(r as OAuthClientRow), redirectUris: JSON.parse((r as { redirectUris: string }).redirectUris) as string[] }
    : null;
const toGrant = (r: unknown): OAuthGrantRow | null =>
  r ? { ...(r as OAuthGrantRow), scopes: JSON.parse((r as { scopes: string }).scopes) as OAuthScope[] } : null;

export const oauthClientById = (db: Database, clientId: string): OAuthClientRow | null =>
  toClient(prepared(db, `${CLIENT} WHERE client_id = ?`).get(clientId));

export const getOAuthGrant = (db: Database, grantN: number): OAuthGrantRow | null =>
  toGrant(prepared(db, `${GRANT} WHERE g.grant_n = ?`).get(grantN));

/** A tenant's grants (of one client when given), newest first. */
export const oauthGrantsOf = (db: Database, ownerId: number, clientId: string | null = null): OAuthGrantRow[] =>
  prepared(
    db,
    `${GRANT} WHERE g.owner_id = @owner AND (@client IS NULL OR g.client_id = @client) ORDER BY g.grant_n DESC`,
  )
    .all({ owner: ownerId, client: clientId })
    .map((r) => toGrant(r)!);

/** The clients a tenant granted access to, in order of registration. */
export const oauthClientsOf = (db: Database, ownerId: number): OAuthClientRow[] =>
  prepared(db, `${CLIENT} WHERE client_id IN (SELECT client_id FROM oauth_grants WHERE owner_id = ?) ORDER BY client_n`)
    .all(ownerId)
    .map((r) => toClient(r)!);

/**
 * The grant behind a live, unexpired access token, when the grant is not revoked: what an OAuth bearer
 * token authenticates as. `now` is the engine clock's ISO time (ISO strings of one format sort as times).
 */
export const grantOfAccessToken = (
  db: Database,
  hash: string,
  now: string,
): (OAuthGrantRow & { expiresAt: string }) | null => {
  const row = prepared(
    db,
    `SELECT ${GRANT_COLUMNS}, t.expires_at AS expiresAt FROM oauth_tokens t JOIN oauth_grants g ON g.grant_n = t.grant_n
    WHERE t.token_hash = ? AND t.kind = 'access' AND t.live = 1 AND g.revoked_at IS NULL AND t.expires_at > ?`,
  ).get(hash, now);
  return row ? { ...toGrant(row)!, expiresAt: (row as { expiresAt: string }).expiresAt } : null;
};

/** Any token a grant ever had — current or rotated out — by its hash. */
export const oauthTokenByHash = (
  db: Database,
  hash: string,
): { grantN: number; kind: 'access' | 'refresh'; live: boolean } | null => {
  const row = prepared(db, 'SELECT grant_n AS grantN, kind, live FROM oauth_tokens WHERE token_hash = ?').get(hash) as
    { grantN: number; kind: 'access' | 'refresh'; live: number } | undefined;
  return row ? { ...row, live: row.live === 1 } : null;
};

/** The first decision recorded for `userCode` after log position `after` (the pending request's creation). */
export const decisionFor = (db: Database, userCode: string, after: number): OAuthDecisionRow | null =>
  (prepared(
    db,
    `SELECT approval_n AS approvalN, user_code AS userCode, decision, principal_kind AS principalKind, principal_id AS principalId,
    owner_id AS ownerId, position FROM oauth_approvals WHERE user_code = ? AND position > ? ORDER BY position LIMIT 1`,
  ).get(userCode, after) as OAuthDecisionRow | undefined) ?? null;
