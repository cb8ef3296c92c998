import type { OAuthEvent } from '../events/oauth.js';

/** What the OAuth decider knows of each of its streams: a client, an approval decided, a grant live or ended. */
interface GrantState {
  grantN: number;
  clientId: string;
  resource: string;
  refreshHash: string;
  refreshExpiresAt: string;
}
export type OAuthState =
  | { status: 'absent' }
  | { status: 'client'; clientId: string }
  | { status: 'decided'; approvalN: number }
  | (GrantState & { status: 'granted' })
  | (GrantState & { status: 'revoked' });

export function evolve(state: OAuthState, event: OAuthEvent): OAuthState {
  switch (event.type) {
    case 'OAuthClientRegistered':
      return { status: 'client', clientId: event.data.clientId };
    case 'OAuthAuthorizationApproved':
    case 'OAuthAuthorizationDenied':
      return { status: 'decided', approvalN: event.data.approvalN };
    case 'OAuthGrantIssued': {
      const d = event.data;
      return {
        status: 'granted',
        grantN: d.grantN,
        clientId: d.clientId,
        resource: d.resource,
        refreshHash: d.refreshTokenHash,
        refreshExpiresAt: d.refreshExpiresAt,
      };
    }
    case 'OAuthGrantRefreshed':
      return state.status === 'granted'
        ? { ...state, refreshHash: event.data.refreshTokenHash, refreshExpiresAt: event.data.refreshExpiresAt }
        : state;
    case 'OAuthGrantRevoked':
      return state.status === 'granted' ? { ...state, status: 'revoked' } : state;
    default: {
      const never: never = event;
      return never;
    }
  }
}
