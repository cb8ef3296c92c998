import type { OAuthEvent } from '../events/oauth.js';
import { sqlFor, type Projection } from '../engine/projection.js';
import { run } from '../engine/projection-sql.js';

/**
 * OAuth as read tables: the clients seen in grants, the owner's decisions (found by user code by the
 * serving process, whichever process recorded them), the grants, and every token hash a grant ever had —
 * `live` marks the current pair, so a rotated refresh token is still recognised (and its reuse caught).
 * Queries: oauth-queries.ts.
 */
type T = 'oauth_clients' | 'oauth_approvals' | 'oauth_grants' | 'oauth_tokens';

const sql = sqlFor((t: Record<T, string>) => ({
  client: `INSERT OR IGNORE INTO "${t.oauth_clients}" (client_n, client_id, kind, client_name, redirect_uris, registered_at) VALUES (?, ?, ?, ?, ?, ?)`,
  decision: `INSERT OR IGNORE INTO "${t.oauth_approvals}" (approval_n, user_code, decision, principal_kind, principal_id, owner_id, via, position, decided_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  grant: `INSERT OR IGNORE INTO "${t.oauth_grants}" (grant_n, client_id, client_name, principal_kind, principal_id, owner_id, scopes, resource, approval_n,
    issued_at, access_expires_at, refresh_expires_at, refresh_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
  refreshed: `UPDATE "${t.oauth_grants}" SET access_expires_at = ?, refresh_expires_at = ?, refreshed_at = ?, refresh_count = refresh_count + 1 WHERE grant_n = ?`,
  revoked: `UPDATE "${t.oauth_grants}" SET revoked_at = ?, revoke_reason = ? WHERE grant_n = ? AND revoked_at IS NULL`,
  token: `INSERT OR IGNORE INTO "${t.oauth_tokens}" (token_hash, grant_n, kind, expires_at, live) VALUES (?, ?, ?, ?, 1)`,
  retire: `UPDATE "${t.oauth_tokens}" SET live = 0 WHERE grant_n = ? AND live = 1`,
}));

export const oauthProjection: Projection<OAuthEvent, T> = {
  name: 'oauth',
  version: 1,
  handles: [
    'OAuthClientRegistered',
    'OAuthAuthorizationApproved',
    'OAuthAuthorizationDenied',
    'OAuthGrantIssued',
    'OAuthGrantRefreshed',
    'OAuthGrantRevoked',
  ],
  tables: ['oauth_clients', 'oauth_approvals', 'oauth_grants', 'oauth_tokens'],
  init(t) {
    return `
      CREATE TABLE IF NOT EXISTS "${t.oauth_clients}" (client_n INTEGER PRIMARY KEY, client_id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
        client_name TEXT NOT NULL, redirect_uris TEXT NOT NULL, registered_at TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS "${t.oauth_approvals}" (approval_n INTEGER PRIMARY KEY, user_code TEXT NOT NULL, decision TEXT NOT NULL,
        principal_kind TEXT, principal_id INTEGER, owner_id INTEGER NOT NULL, via TEXT NOT NULL, position INTEGER NOT NULL, decided_at TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS "${t.oauth_approvals}_by_code" ON "${t.oauth_approvals}" (user_code, position);
      CREATE TABLE IF NOT EXISTS "${t.oauth_grants}" (grant_n INTEGER PRIMARY KEY, client_id TEXT NOT NULL, client_name TEXT NOT NULL,
        principal_kind TEXT NOT NULL, principal_id INTEGER NOT NULL, owner_id INTEGER NOT NULL, scopes TEXT NOT NULL, resource TEXT NOT NULL,
        approval_n INTEGER NOT NULL, issued_at TEXT NOT NULL, access_expires_at TEXT NOT NULL, refresh_expires_at TEXT NOT NULL,
        refreshed_at TEXT, refresh_count INTEGER NOT NULL, revoked_at TEXT, revoke_reason TEXT);
      CREATE INDEX IF NOT EXISTS "${t.oauth_grants}_by_owner" ON "${t.oauth_grants}" (owner_id, client_id);
      CREATE TABLE IF NOT EXISTS "${t.oauth_tokens}" (token_hash TEXT PRIMARY KEY, grant_n INTEGER NOT NULL, kind TEXT NOT NULL,
        expires_at TEXT NOT NULL, live INTEGER NOT NULL) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS "${t.oauth_tokens}_by_grant" ON "${t.oauth_tokens}" (grant_n, live);
    `;
  },
  *apply(e, t) {
    const q = sql(t);
    switch (e.type) {
      case 'OAuthClientRegistered': {
        const d = e.data;
        yield run(q.client, d.clientN, d.clientId, d.kind, d.clientName, JSON.stringify(d.redirectUris), e.recordedAt);
        return;
      }
      case 'OAuthAuthorizationApproved': {
        const d = e.data;
        yield run(
          q.decision,
          d.approvalN,
          d.userCode,
          'approved',
          d.principal.kind,
          d.principal.id,
          d.ownerId,
          d.via,
          e.position,
          e.recordedAt,
        );
        return;
      }
      case 'OAuthAuthorizationDenied': {
        const d = e.data;
        yield run(
          q.decision,
          d.approvalN,
          d.userCode,
          'denied',
          null,
          null,
          d.ownerId,
          d.via,
          e.position,
          e.recordedAt,
        );
        return;
      }
      case 'OAuthGrantIssued': {
        const d = e.data;
        yield run(
          q.grant,
          d.grantN,
          d.clientId,
          d.clientName,
          d.principal.kind,
          d.principal.id,
          d.ownerId,
          JSON.stringify(d.scopes),
          d.resource,
          d.approvalN,
          e.recordedAt,
          d.accessExpiresAt,
          d.refreshExpiresAt,
        );
        yield run(q.token, d.accessTokenHash, d.grantN, 'access', d.accessExpiresAt);
        yield run(q.token, d.refreshTokenHash, d.grantN, 'refresh', d.refreshExpiresAt);
        return;
      }
      case 'OAuthGrantRefreshed': {
        const d = e.data;
        yield run(q.retire, d.grantN);
        yield run(q.token, d.accessTokenHash, d.grantN, 'access', d.accessExpiresAt);
        yield run(q.token, d.refreshTokenHash, d.grantN, 'refresh', d.refreshExpiresAt);
        yield run(q.refreshed, d.accessExpiresAt, d.refreshExpiresAt, e.recordedAt, d.grantN);
        return;
      }
      case 'OAuthGrantRevoked':
        yield run(q.revoked, e.recordedAt, e.data.reason, e.data.grantN);
        return;
      default: {
        const never: never = e;
        return never;
      }
    }
  },
};
