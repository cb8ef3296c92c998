import type { Event } from '../engine/event.js';

/**
 * OAuth 2.1 for remote MCP clients. Colony is its own authorization server: a client
 * (registered dynamically, RFC 7591, or named by its metadata document's URL) asks for access, the owner
 * approves in the console or with `colony oauth approve CODE`, and the client trades the code for an
 * access token that acts as the owner or as one of the owner's agents — scope `mcp` only.
 *
 * Only what the owner decided and what was granted is logged. Unapproved registrations and pending
 * requests stay in the serving process's memory (anyone may send them; the append-only log must not
 * grow from anonymous traffic), so a client is logged when its first grant is issued.
 *
 * Streams: `oauth-client-<n>` (a client seen in a grant), `oauth-approval-<n>` (one decision of the
 * owner's), `oauth-grant-<n>` (a grant: its tokens, refreshes and end). Tokens appear only as sha256.
 */
export type OAuthClientKind = 'dcr' | 'cimd';
export const OAUTH_SCOPES = ['mcp'] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** Who a grant acts as: the owner (`user`) or exactly one of the owner's agents; `ownerId` is the tenant. */
export interface OAuthPrincipal {
  kind: 'user' | 'agent';
  id: number;
  ownerId: number;
}

export type OAuthClientRegistered = Event<
  'OAuthClientRegistered',
  {
    clientN: number;
    clientId: string;
    kind: OAuthClientKind;
    clientName: string;
    redirectUris: string[];
  }
>;

/** The owner's decision on the pending request that showed `userCode`; `via` says where it was made. */
export type OAuthAuthorizationApproved = Event<
  'OAuthAuthorizationApproved',
  {
    approvalN: number;
    userCode: string;
    principal: OAuthPrincipal;
    ownerId: number;
    via: 'console' | 'cli';
  }
>;
export type OAuthAuthorizationDenied = Event<
  'OAuthAuthorizationDenied',
  { approvalN: number; userCode: string; ownerId: number; via: 'console' | 'cli' }
>;

export interface OAuthTokenPair {
  accessTokenHash: string;
  accessExpiresAt: string;
  refreshTokenHash: string;
  refreshExpiresAt: string;
}

export type OAuthGrantIssued = Event<
  'OAuthGrantIssued',
  OAuthTokenPair & {
    grantN: number;
    clientId: string;
    clientName: string;
    principal: OAuthPrincipal;
    ownerId: number;
    scopes: OAuthScope[];
    resource: string;
    approvalN: number;
  }
>;

/** Rotation (RFC 9700 §4.14): the new pair replaces the old one, which stops working at once. */
export type OAuthGrantRefreshed = Event<
  'OAuthGrantRefreshed',
  OAuthTokenPair & { grantN: number; previousRefreshHash: string }
>;

export type OAuthRevokeReason = 'owner' | 'client' | 'client_revoked' | 'code_reuse' | 'refresh_token_reuse';
export type OAuthGrantRevoked = Event<'OAuthGrantRevoked', { grantN: number; reason: OAuthRevokeReason }>;

export type OAuthEvent =
  | OAuthClientRegistered
  | OAuthAuthorizationApproved
  | OAuthAuthorizationDenied
  | OAuthGrantIssued
  | OAuthGrantRefreshed
  | OAuthGrantRevoked;

export const oauthClientStream = (n: number): string => `oauth-client-${n}`;
export const oauthApprovalStream = (n: number): string => `oauth-approval-${n}`;
export const oauthGrantStream = (n: number): string => `oauth-grant-${n}`;

/** User codes: 8 characters without look-alikes (no 0/O, 1/I), shown as `WXYZ-2345`. */
export const USER_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const USER_CODE = /^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/;

/** What a person types (`wxyz2345`, ` WXYZ-2345 `) as the stored form, or null when it cannot be a code. */
export function normalizeUserCode(raw: string): string | null {
  const bare = raw.trim().toUpperCase().replace(/[\s-]/g, '');
  const code = `${bare.slice(0, 4)}-${bare.slice(4)}`;
  return bare.length === 8 && USER_CODE.test(code) ? code : null;
}
