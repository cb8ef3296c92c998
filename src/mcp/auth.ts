import type { App } from '../app.js';
import { prepared } from '../db.js';
import type { TokenScope } from '../events/principals.js';
import { findActiveToken, getAgent, getUser } from '../projections/principals.js';
import { tokenHash } from '../tokens.js';

/**
 * Who is calling: the principal behind a bearer token, read from the principals projection on every
 * request (and, for a long-lived stdio session, on every call), so a revoked token or a quarantine
 * takes effect at once.
 */
export type Caller =
  | { kind: 'owner'; tokenId: number; userId: number; name: string; scopes: TokenScope[] }
  | {
      kind: 'agent'; tokenId: number; agentId: number; ownerId: number; name: string; scopes: TokenScope[];
      toolScope: string[]; quarantined: boolean;
    };

export function authenticate(app: App, token: string | undefined): Caller | null {
  return token ? callerOfHash(app, tokenHash(token)) : null;
}

/**
 * The principal behind a token's sha256, read from the principals projection now: what a token
 * authenticates as, and what a console session (which keeps only the hash, http/session.ts) does on
 * every request — so a revoked token or a quarantine applies at once to both.
 */
export function callerOfHash(app: App, hash: string): Caller | null {
  const row = findActiveToken(app.engine.db, hash);
  if (!row) return null;
  if (row.principalKind === 'user') {
    const user = getUser(app.engine.db, row.principalId);
    return user && { kind: 'owner', tokenId: row.tokenId, userId: user.userId, name: user.name, scopes: row.scopes };
  }
  const agent = getAgent(app.engine.db, row.principalId);
  return agent && {
    kind: 'agent', tokenId: row.tokenId, agentId: agent.agentId, ownerId: agent.ownerId, name: agent.name, scopes: row.scopes,
    toolScope: agent.toolScope, quarantined: agent.quarantined,
  };
}

/**
 * The principal by kind, id and tenant — `agent:7@1`, `user:1@1` — never by name (names repeat across
 * tenants): what sessions, confirmation tokens and idempotency keys are bound to (DESIGN §8).
 */
export const principalKey = (caller: Caller): string =>
  caller.kind === 'owner' ? `user:${caller.userId}@${caller.userId}` : `agent:${caller.agentId}@${caller.ownerId}`;

/** The `actor` recorded in events: `user:<name>` or `agent:<name>`. */
export const actorOf = (caller: Caller): string => `${caller.kind === 'owner' ? 'user' : 'agent'}:${caller.name}`;


/**
 * Authentication on every request, without a database round trip for every call: callers are cached
 * by token hash and the cache is dropped whenever a principal's stream changes in this process (the bus)
 * or any other process commits (SQLite's data_version) — so a revocation or a quarantine still takes
 * effect on the very next call, wherever it was made.
 */
export class Authenticator {
  private readonly cache = new Map<string, Caller>();
  private seenVersion = -1;

  constructor(private readonly app: App) {
    app.engine.bus.events$.subscribe((e) => {
      if (e.streamId.startsWith('user-') || e.streamId.startsWith('agent-')) this.cache.clear();
    });
  }

  authenticate(token: string | undefined): Caller | null {
    if (!token) return null;
    const version = (prepared(this.app.engine.db, 'PRAGMA data_version').get() as { data_version: number }).data_version;
    if (version !== this.seenVersion) {
      this.cache.clear();
      this.seenVersion = version;
    }
    const key = tokenHash(token);
    const hit = this.cache.get(key);
    if (hit) return hit;
    const caller = authenticate(this.app, token);
    if (caller) {
      if (this.cache.size >= 1000) this.cache.clear();
      this.cache.set(key, caller);
    }
    return caller;
  }
}
