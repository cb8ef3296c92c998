import type { App } from '../app.js';
import { type Caller } from '../events/principals.js';
import { grantOfAccessToken } from '../projections/oauth-queries.js';
import { oauthProjection } from '../projections/oauth.js';
import { handlesType } from '../engine/projection.js';
import { principalsProjection } from '../projections/principals.js';
import { findActiveToken, getAgent, getUser, tokensOf } from '../projections/principal-queries.js';
import { tokenHash } from '../tokens.js';

/**
 * Who is calling: the principal behind a bearer token, read from the principals projection on every
 * request (and, for a long-lived stdio session, on every call), so a revoked token or a quarantine
 * takes effect at once. A token may also be an OAuth access token (src/http/oauth.ts): then `oauth` names its
 * grant, `tokenId` is 0, and everything else is the principal's own — an agent's tool scope and
 * quarantine apply exactly as to its own token.
 */

/** What a request handler knows about its request: the validated token's info, over HTTP. */
export interface RequestAuth {
  http?: { authInfo?: { extra?: Record<string, unknown> } };
}
/** The principal of a request as it is now: asked on every list, read and call (revocation applies at once). */
export type CurrentCaller = (request: RequestAuth) => Caller | null;

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
  if (!row) return oauthCallerOfHash(app, hash);
  if (row.principalKind === 'user') {
    const user = getUser(app.engine.db, row.principalId);
    return user && { kind: 'owner', tokenId: row.tokenId, userId: user.userId, name: user.name, scopes: row.scopes };
  }
  const agent = getAgent(app.engine.db, row.principalId);
  return (
    agent && {
      kind: 'agent',
      tokenId: row.tokenId,
      agentId: agent.agentId,
      ownerId: agent.ownerId,
      name: agent.name,
      scopes: row.scopes,
      toolScope: agent.toolScope,
      quarantined: agent.quarantined,
    }
  );
}

/**
 * The principal behind a live OAuth access token: unexpired by the engine clock, its grant not revoked,
 * and its principal still holding a live token of its own — revoking all of an agent's (or the owner's)
 * tokens cuts the OAuth access granted to it too.
 */
function oauthCallerOfHash(app: App, hash: string): Caller | null {
  const db = app.engine.db;
  const grant = grantOfAccessToken(db, hash, app.engine.clock().toISOString());
  if (!grant || !tokensOf(db, grant.principalKind, grant.principalId).some((t) => t.revokedAt === null)) return null;
  const oauth = { grantId: grant.grantN, clientId: grant.clientId, expiresAt: grant.expiresAt };
  if (grant.principalKind === 'user') {
    const user = getUser(db, grant.principalId);
    return user && user.userId === grant.ownerId
      ? { kind: 'owner', tokenId: 0, userId: user.userId, name: user.name, scopes: grant.scopes, oauth }
      : null;
  }
  const agent = getAgent(db, grant.principalId);
  return agent && agent.ownerId === grant.ownerId
    ? {
        kind: 'agent',
        tokenId: 0,
        agentId: agent.agentId,
        ownerId: agent.ownerId,
        name: agent.name,
        scopes: grant.scopes,
        toolScope: agent.toolScope,
        quarantined: agent.quarantined,
        oauth,
      }
    : null;
}

/**
 * The principal by kind, id and tenant — `agent:7@1`, `user:1@1` — never by name (names repeat across
 * tenants): what sessions, confirmation tokens and idempotency keys are bound to, so none of them can
 * be used by another principal, or in another tenant, that happens to share a name.
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
 *
 * "Changes" means an event that changes what a caller is read from: the tables of the principals and
 * OAuth projections (callerOfHash reads nothing else). Other events on those streams — the reputation
 * evidence every verified task appends to its agent's stream — leave every cached caller as it is, so
 * they no longer send every session back to the database.
 */
const changesCallers = (type: string): boolean =>
  handlesType(principalsProjection, type) || handlesType(oauthProjection, type);
const changesCaller = (streamId: string, type: string): boolean =>
  (streamId.startsWith('user-') || streamId.startsWith('agent-') || streamId.startsWith('oauth-')) &&
  changesCallers(type);

export class Authenticator {
  private readonly cache = new Map<string, Caller>();
  private seenVersion = -1;
  private versionReadThisTurn = false;
  /** Its own statement (not the shared cache's), so it can answer the bare number. */
  private readonly dataVersion;

  constructor(private readonly app: App) {
    this.dataVersion = app.engine.db.prepare('PRAGMA data_version').pluck();
    // OAuth streams too: a revoked grant must fail on the very next request, like a revoked token.
    // At append, not only at publish: under group commit a revocation is committed a turn later, and a
    // call handled in between must already see it (fail closed). A rolled-back batch drops what was
    // cached from its uncommitted rows.
    app.engine.bus.onAppend.add((events) => {
      if (events.some((e) => changesCaller(e.streamId, e.type))) this.cache.clear();
    });
    app.engine.group.onRollback.add(() => this.cache.clear());
    app.engine.bus.events$.subscribe((e) => {
      if (changesCaller(e.streamId, e.type)) this.cache.clear();
    });
  }

  authenticate(token: string | undefined): Caller | null {
    return token ? this.authenticateHash(tokenHash(token)) : null;
  }

  /**
   * The same for a token known by its sha256 (`tokenHash`): a connection that holds one token for its
   * lifetime (stdio) hashes it once instead of on every call.
   */
  authenticateHash(key: string): Caller | null {
    this.checkOtherProcesses();
    const hit = this.cache.get(key);
    // An OAuth token expires by the engine clock while cached: checked on every hit.
    if (hit && !(hit.oauth && Date.parse(hit.oauth.expiresAt) <= this.app.engine.clock().getTime())) return hit;
    if (hit) this.cache.delete(key);
    const caller = callerOfHash(this.app, key);
    if (caller) {
      if (this.cache.size >= 1000) this.cache.clear();
      this.cache.set(key, caller);
    }
    return caller;
  }

  /**
   * Another process's commit (a revocation by `colony agents token --revoke`) shows in SQLite's
   * data_version. It is read once per turn of the event loop, not per call: the calls of one turn
   * arrived before it began, so a revocation committed meanwhile was made after they were sent, and the
   * next turn — where every call sent after it is handled — reads the new version.
   */
  private checkOtherProcesses(): void {
    if (this.versionReadThisTurn) return;
    this.versionReadThisTurn = true;
    setImmediate(() => (this.versionReadThisTurn = false));
    const version = this.dataVersion.get() as number;
    if (version !== this.seenVersion) {
      this.cache.clear();
      this.seenVersion = version;
    }
  }
}
