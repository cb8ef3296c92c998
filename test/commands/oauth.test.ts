import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { oauthDecider, type CodeFacts, type DecideAuthorization, type IssueGrant } from '../../src/commands/oauth.js';
import {
  normalizeUserCode,
  type OAuthEvent,
  type OAuthGrantIssued,
  type OAuthTokenPair,
} from '../../src/events/oauth.js';
import { spec } from '../helpers/decider-spec.js';
import { pkcePair } from '../helpers/oauth.js';

/** The OAuth rules, given/when/then without a database (commands/oauth.ts). */
const NOW = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-01T00:05:00.000Z';
const { verifier, challenge } = pkcePair();
const owner = { kind: 'user' as const, id: 1, ownerId: 1 };
const agent = { kind: 'agent' as const, id: 7, ownerId: 1 };
const pair = (n: number): OAuthTokenPair => ({
  accessTokenHash: `a${n}`,
  accessExpiresAt: '2026-01-01T01:00:00.000Z',
  refreshTokenHash: `r${n}`,
  refreshExpiresAt: '2026-01-31T00:00:00.000Z',
});
const facts: CodeFacts = {
  clientId: 'c1',
  clientName: 'Client',
  redirectUri: 'http://127.0.0.1:5000/cb',
  codeChallenge: challenge,
  expiresAt: '2026-01-01T00:02:00.000Z',
  resource: 'http://127.0.0.1:7070/mcp',
  scopes: ['mcp'],
  principal: agent,
  approvalN: 3,
};
const issue = (request: Partial<IssueGrant['request']> = {}, code: Partial<CodeFacts> = {}): IssueGrant => ({
  type: 'IssueGrant',
  grantN: 5,
  code: { ...facts, ...code },
  tokens: pair(1),
  request: { clientId: 'c1', redirectUri: facts.redirectUri, codeVerifier: verifier, resource: null, ...request },
});
const issued: OAuthGrantIssued = {
  type: 'OAuthGrantIssued',
  data: {
    grantN: 5,
    clientId: 'c1',
    clientName: 'Client',
    principal: agent,
    ownerId: 1,
    scopes: ['mcp'],
    resource: facts.resource,
    approvalN: 3,
    ...pair(1),
  },
};
const decide = (d: Partial<DecideAuthorization> = {}): DecideAuthorization => ({
  type: 'DecideAuthorization',
  decision: 'approve',
  approvalN: 2,
  userCode: 'WXYZ-2345',
  via: 'cli',
  decidedBy: { kind: 'user', id: 1 },
  principal: owner,
  ...d,
});
const refresh = (presented: string, clientId = 'c1') => ({
  type: 'RefreshGrant' as const,
  clientId,
  presentedRefreshHash: presented,
  resource: null,
  tokens: pair(2),
});
const oauth = spec(oauthDecider);

describe("the owner's decision", () => {
  it('the owner approves as themself or as one of their agents, or denies', () => {
    oauth
      .given([])
      .when(decide())
      .then([
        {
          type: 'OAuthAuthorizationApproved',
          data: { approvalN: 2, userCode: 'WXYZ-2345', principal: owner, ownerId: 1, via: 'cli' },
        },
      ]);
    oauth
      .given([])
      .when(decide({ principal: agent }))
      .then([
        {
          type: 'OAuthAuthorizationApproved',
          data: { approvalN: 2, userCode: 'WXYZ-2345', principal: agent, ownerId: 1, via: 'cli' },
        },
      ]);
    oauth
      .given([])
      .when(decide({ decision: 'deny', principal: null }))
      .then([
        { type: 'OAuthAuthorizationDenied', data: { approvalN: 2, userCode: 'WXYZ-2345', ownerId: 1, via: 'cli' } },
      ]);
  });

  it("an agent never decides; nobody grants another tenant's principal or another person", () => {
    oauth
      .given([])
      .when(decide({ decidedBy: { kind: 'agent', id: 7 } }))
      .thenThrows('ErrForbidden', 'agent never');
    oauth
      .given([])
      .when(decide({ principal: { kind: 'agent', id: 9, ownerId: 2 } }))
      .thenThrows('ErrForbidden');
    oauth
      .given([])
      .when(decide({ principal: { kind: 'user', id: 2, ownerId: 1 } }))
      .thenThrows('ErrForbidden');
    oauth
      .given([])
      .when(decide({ userCode: 'wxyz-2345' }))
      .thenThrows('ErrInvalidInput');
    oauth
      .given([
        { type: 'OAuthAuthorizationDenied', data: { approvalN: 2, userCode: 'WXYZ-2345', ownerId: 1, via: 'cli' } },
      ])
      .when(decide())
      .thenThrows('ErrOAuthDecided');
  });

  it('user codes are read the way people type them', () => {
    assert.equal(normalizeUserCode(' wxyz2345 '), 'WXYZ-2345');
    assert.equal(normalizeUserCode('WXYZ-2345'), 'WXYZ-2345');
    assert.equal(normalizeUserCode('WXYZ-0000'), null, '0 and O, 1 and I are not in the alphabet');
    assert.equal(normalizeUserCode('WXYZ-23456'), null);
  });
});

describe('redeeming a code', () => {
  it("issues the grant to the code's client, redirect, resource and principal when the PKCE verifier matches", () => {
    oauth
      .given([])
      .when(issue({ resource: facts.resource }), { now: NOW })
      .then([issued]);
  });

  it('refuses another client, another redirect URI, an expired code, a wrong or plain verifier, another resource, another scope', () => {
    oauth
      .given([])
      .when(issue({ clientId: 'c2' }), { now: NOW })
      .thenThrows('ErrOAuthInvalidGrant', 'another client');
    oauth
      .given([])
      .when(issue({ redirectUri: 'http://127.0.0.1:5001/cb' }), { now: NOW })
      .thenThrows('ErrOAuthInvalidGrant', 'redirect_uri');
    oauth.given([]).when(issue(), { now: LATER }).thenThrows('ErrOAuthInvalidGrant', 'expired');
    oauth
      .given([])
      .when(issue({ codeVerifier: pkcePair().verifier }), { now: NOW })
      .thenThrows('ErrOAuthInvalidGrant', 'PKCE');
    oauth
      .given([])
      .when(issue({ codeVerifier: 'x'.repeat(43) }, { codeChallenge: 'x'.repeat(43) }), { now: NOW })
      .thenThrows('ErrOAuthInvalidGrant', 'PKCE');
    oauth
      .given([])
      .when(issue({ resource: 'https://elsewhere.example/mcp' }), { now: NOW })
      .thenThrows('ErrOAuthInvalidTarget');
    oauth
      .given([])
      .when(issue({}, { scopes: ['api' as 'mcp'] }), { now: NOW })
      .thenThrows('ErrOAuthInvalidScope');
    oauth.given([issued]).when(issue(), { now: NOW }).thenThrows('ErrOAuthGrantExists');
  });
});

const revoked = (reason: 'owner' | 'client' | 'refresh_token_reuse'): OAuthEvent => ({
  type: 'OAuthGrantRevoked',
  data: { grantN: 5, reason },
});

describe('refresh and revocation', () => {
  const refreshed: OAuthEvent = {
    type: 'OAuthGrantRefreshed',
    data: { grantN: 5, previousRefreshHash: 'r1', ...pair(2) },
  };

  it('the current refresh token rotates the pair; a rotated-out one revokes the grant instead', () => {
    oauth.given([issued]).when(refresh('r1'), { now: NOW }).then([refreshed]);
    oauth
      .given([issued, refreshed])
      .when(refresh('r1'), { now: NOW })
      .then([revoked('refresh_token_reuse')]);
  });

  it('refuses a refresh of a revoked grant, by another client, or after the refresh token expired', () => {
    oauth
      .given([issued, revoked('owner')])
      .when(refresh('r1'), { now: NOW })
      .thenThrows('ErrOAuthInvalidGrant', 'revoked');
    oauth.given([issued]).when(refresh('r1', 'c2'), { now: NOW }).thenThrows('ErrOAuthInvalidGrant', 'another client');
    oauth
      .given([issued])
      .when(refresh('r1'), { now: '2026-02-01T00:00:00.000Z' })
      .thenThrows('ErrOAuthInvalidGrant', 'expired');
    oauth.given([]).when(refresh('r1'), { now: NOW }).thenThrows('ErrOAuthInvalidGrant');
  });

  it('revokes once', () => {
    oauth
      .given([issued])
      .when({ type: 'RevokeGrant', reason: 'owner', clientId: null })
      .then([revoked('owner')]);
    oauth
      .given([issued, revoked('owner')])
      .when({ type: 'RevokeGrant', reason: 'owner', clientId: null })
      .thenNothingHappened();
    oauth.given([]).when({ type: 'RevokeGrant', reason: 'owner', clientId: null }).thenThrows('ErrNotFound');
  });

  it('registers a client once, with at least one redirect URI', () => {
    const client = {
      clientN: 1,
      clientId: 'c1',
      kind: 'dcr' as const,
      clientName: 'Client',
      redirectUris: ['http://127.0.0.1/cb'],
    };
    oauth
      .given([])
      .when({ type: 'RegisterOAuthClient', client })
      .then([{ type: 'OAuthClientRegistered', data: client }]);
    oauth
      .given([{ type: 'OAuthClientRegistered', data: client }])
      .when({ type: 'RegisterOAuthClient', client })
      .thenThrows('ErrOAuthClientExists');
    oauth
      .given([])
      .when({ type: 'RegisterOAuthClient', client: { ...client, redirectUris: [] } })
      .thenThrows('ErrInvalidInput');
  });
});

/** A client ends only a grant issued to it (RFC 7009): another client's token is refused, even on a grant already ended. */
describe('RevokeGrant by a client: only its own grant', () => {
  it('the client the grant was issued to ends it', () => {
    oauth
      .given([issued])
      .when({ type: 'RevokeGrant', reason: 'client', clientId: issued.data.clientId })
      .then([revoked('client')]);
  });

  it("another client's token is ErrOAuthUnauthorizedClient, live or ended", () => {
    for (const history of [[issued], [issued, revoked('owner')]]) {
      const e = oauth
        .given(history)
        .when({ type: 'RevokeGrant', reason: 'client', clientId: 'https://other.example/meta.json' })
        .thenThrows('ErrOAuthUnauthorizedClient', 'this token was issued to another client');
      assert.equal(e.details, undefined);
    }
  });

  it('its own ended grant: nothing to do', () => {
    oauth
      .given([issued, revoked('owner')])
      .when({ type: 'RevokeGrant', reason: 'client', clientId: issued.data.clientId })
      .thenNothingHappened();
  });
});
