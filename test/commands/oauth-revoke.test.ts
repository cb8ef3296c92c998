import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { oauthDecider } from '../../src/commands/oauth.js';
import type { OAuthEvent, OAuthGrantIssued } from '../../src/events/oauth.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * Revoking an OAuth grant, given/when/then: the owner ends any grant; a client ends only a grant issued to
 * it (RFC 7009) — another client's token is ErrOAuthUnauthorizedClient, even on a grant already ended.
 */
const issued: OAuthGrantIssued = {
  type: 'OAuthGrantIssued',
  data: {
    grantN: 4,
    clientId: 'https://client.example/meta.json',
    clientName: 'Client',
    principal: { kind: 'user', id: 1, ownerId: 1 },
    ownerId: 1,
    scopes: ['mcp'],
    resource: 'https://colony.example/mcp',
    approvalN: 2,
    accessTokenHash: 'a'.repeat(64),
    accessExpiresAt: '2026-01-01T01:00:00.000Z',
    refreshTokenHash: 'r'.repeat(64),
    refreshExpiresAt: '2026-01-31T00:00:00.000Z',
  },
};
const revoked = (reason: 'client' | 'owner'): OAuthEvent => ({
  type: 'OAuthGrantRevoked',
  data: { grantN: 4, reason },
});
const grant = spec(oauthDecider);

describe('RevokeGrant by a client: only its own grant', () => {
  it('the client the grant was issued to ends it', () => {
    grant
      .given([issued])
      .when({ type: 'RevokeGrant', reason: 'client', clientId: issued.data.clientId })
      .then([revoked('client')]);
  });

  it("another client's token is ErrOAuthUnauthorizedClient, live or ended", () => {
    for (const history of [[issued], [issued, revoked('owner')]]) {
      const e = grant
        .given(history)
        .when({ type: 'RevokeGrant', reason: 'client', clientId: 'https://other.example/meta.json' })
        .thenThrows('ErrOAuthUnauthorizedClient', 'this token was issued to another client');
      assert.equal(e.details, undefined);
    }
  });

  it('its own ended grant: nothing to do', () => {
    grant
      .given([issued, revoked('owner')])
      .when({ type: 'RevokeGrant', reason: 'client', clientId: issued.data.clientId })
      .thenNothingHappened();
  });

  it('the owner (no client named) ends any grant', () => {
    grant
      .given([issued])
      .when({ type: 'RevokeGrant', reason: 'owner' })
      .then([revoked('owner')]);
  });
});
