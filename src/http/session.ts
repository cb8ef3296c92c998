import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import * as z from 'zod';
import { DomainError } from '../errors.js';
import { principalKey } from '../mcp/auth.js';
import type { McpContext } from '../mcp/context.js';
import { tokenHash } from '../tokens.js';
import { body, callerOf } from './api-common.js';
import { type Caller } from '../events/principals.js';

/**
 * Console sign-in: `POST /api/session {token}` trades an owner's or an agent's token for an
 * HttpOnly, SameSite=Strict cookie holding a random 256-bit session id, and a CSRF token the page keeps
 * in memory. The server keeps, per session, the principal, the token's sha256 (never the token) and the
 * CSRF token; every request re-authenticates through that hash, so a revoked token or a quarantine
 * applies on the very next request. Sessions end after 12 h idle, on sign-out, or when their principal
 * opens more than 64 (the least recently used goes). Wrong tokens slow down per client address
 * (SignInBackoff); the right one always signs in.
 */
export const SESSION_COOKIE = 'colony_session';
export const SESSION_IDLE_MS = 12 * 3600_000;
export const SESSIONS_PER_PRINCIPAL = 64;
export const SESSIONS_MAX = 10_000;

export interface Session {
  principal: string;
  tokenHash: string;
  csrf: string;
  lastSeen: number;
}

/** Sessions by sha256 of their id (the id itself is only ever in the browser's cookie), least recently used first. */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly now: () => number = Date.now,
    readonly idleMs = SESSION_IDLE_MS,
    readonly perPrincipal = SESSIONS_PER_PRINCIPAL,
    readonly max = SESSIONS_MAX,
  ) {}

  create(principal: string, hash: string): { id: string; session: Session } {
    this.purge();
    const mine = [...this.sessions].filter(([, s]) => s.principal === principal);
    for (const [key] of mine.slice(0, Math.max(0, mine.length - this.perPrincipal + 1))) this.sessions.delete(key);
    while (this.sessions.size >= this.max) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('hex');
    const session = { principal, tokenHash: hash, csrf: randomBytes(32).toString('hex'), lastSeen: this.now() };
    this.sessions.set(keyOf(id), session);
    return { id, session };
  }

  /** The live session with this id, marked used now; null when unknown or idle too long (then dropped). */
  find(id: string): Session | null {
    const key = keyOf(id);
    const s = this.sessions.get(key);
    if (!s) return null;
    this.sessions.delete(key);
    if (this.now() - s.lastSeen >= this.idleMs) return null;
    s.lastSeen = this.now();
    this.sessions.set(key, s);
    return s;
  }

  drop(id: string): void {
    this.sessions.delete(keyOf(id));
  }

  get size(): number {
    return this.sessions.size;
  }

  private purge(): void {
    const cutoff = this.now() - this.idleMs;
    for (const [key, s] of this.sessions) if (s.lastSeen <= cutoff) this.sessions.delete(key);
  }
}

const keyOf = (id: string): string => createHash('sha256').update(id).digest('hex');

/** Wrong tokens a source may send before its wrong answers slow down: room for typos. */
export const SIGNIN_FREE_FAILURES = 5;
export const SIGNIN_BACKOFF_FIRST_MS = 1_000;
export const SIGNIN_BACKOFF_MAX_MS = 5 * 60_000;
/** A source with no failure for this long starts again from nothing. */
export const SIGNIN_FORGET_MS = 15 * 60_000;
export const SIGNIN_SOURCES_MAX = 10_000;

/**
 * Failed sign-ins per source (client address), as an exponential backoff that applies to wrong tokens
 * only. Every local caller is 127.0.0.1 — the owner's browser and any process on the host alike — so a
 * lockout there was the owner's lockout: ten bad sign-ins kept the right token out for a minute. Now the
 * token is checked first and a right one always signs in at once; a wrong one is counted, and past
 * SIGNIN_FREE_FAILURES each counted failure opens a window (1 s, doubling, at most 5 min) during which
 * further wrong tokens are answered ErrRateLimited without being counted. A success resets nothing: an
 * agent on the host could otherwise sign in as itself to wipe the count of its guesses at the owner's
 * token. What stops guessing is the token itself (256 random bits); this bounds the noise per source. The
 * table holds at most SIGNIN_SOURCES_MAX sources, the least recently failing dropped first.
 */
export class SignInBackoff {
  private readonly sources = new Map<string, { failures: number; last: number; until: number }>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxSources = SIGNIN_SOURCES_MAX,
  ) {}

  /** Seconds during which a wrong token from `source` is refused rather than counted; 0 when none. */
  waitSec(source: string): number {
    const left = (this.sources.get(source)?.until ?? 0) - this.now();
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  /** Counts a wrong token from `source` (outside its window), opening the next window past the free failures. */
  fail(source: string): void {
    const at = this.now();
    const before = this.sources.get(source);
    const failures = before && at - before.last < SIGNIN_FORGET_MS ? before.failures + 1 : 1;
    const over = failures - SIGNIN_FREE_FAILURES;
    const until = over > 0 ? at + Math.min(SIGNIN_BACKOFF_FIRST_MS * 2 ** (over - 1), SIGNIN_BACKOFF_MAX_MS) : 0;
    this.sources.delete(source);
    while (this.sources.size >= this.maxSources) this.sources.delete(this.sources.keys().next().value!);
    this.sources.set(source, { failures, last: at, until });
  }

  /** Sources remembered now (bounded by maxSources). */
  get size(): number {
    return this.sources.size;
  }
}

export const principalOf = (c: Caller) =>
  c.kind === 'owner'
    ? { kind: 'owner' as const, id: c.userId, name: c.name, tenant: c.userId }
    : { kind: 'agent' as const, id: c.agentId, name: c.name, tenant: c.ownerId };

/** The session id in the request's Cookie header, if it carries a well-formed one. */
export function sessionCookie(req: Request): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (/^[0-9a-f]{64}$/.test(value)) return value;
  }
  return null;
}

export function setSessionCookie(req: Request, res: Response, id: string, maxAgeSec: number): void {
  res.append(
    'Set-Cookie',
    `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSec}${req.secure ? '; Secure' : ''}`,
  );
}
export const clearSessionCookie = (req: Request, res: Response): void => setSessionCookie(req, res, '', 0);

/** This server's own origin as the browser names it: a console page served here sends exactly this. */
export const ownOrigin = (req: Request): string => `${req.protocol}://${req.headers.host ?? ''}`.toLowerCase();
export const crossOrigin = (req: Request): boolean => {
  const origin = req.headers.origin;
  return origin !== undefined && origin.toLowerCase() !== ownOrigin(req);
};

export const csrfMatches = (sent: string | undefined, expected: string): boolean =>
  typeof sent === 'string' &&
  sent.length === expected.length &&
  timingSafeEqual(Buffer.from(sent), Buffer.from(expected));

const SignIn = z.strictObject({ token: z.string().min(1).max(512) });

/** `POST /api/session` — before the auth middleware: it is how a browser gets authenticated. */
export function mountSignIn(router: Router, ctx: McpContext, sessions: SessionStore, backoff: SignInBackoff): void {
  router.post('/session', express.json({ limit: '4kb' }), (req, res) => {
    if (crossOrigin(req)) throw new DomainError('ErrCsrf', 'sign-in from another origin is refused');
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const { token } = body(SignIn, req);
    // The token first: a right one signs in whatever this address did before (SignInBackoff).
    const caller = ctx.auth.authenticate(token);
    if (!caller) {
      const wait = backoff.waitSec(address);
      if (wait > 0) {
        res.setHeader('Retry-After', String(wait));
        throw new DomainError(
          'ErrRateLimited',
          `too many failed sign-ins from this address: a wrong token is refused for ${wait} s more (the right one still signs in)`,
          { retry_after_sec: wait },
        );
      }
      backoff.fail(address);
      throw new DomainError('ErrUnauthorized', 'unknown or revoked token');
    }
    // An OAuth access token carries only the `mcp` scope; a console session would act with the owner's whole REST surface.
    if (caller.oauth)
      throw new DomainError(
        'ErrUnauthorized',
        'an OAuth access token reaches /mcp only; sign in with an owner or agent token',
      );
    const old = sessionCookie(req);
    if (old) sessions.drop(old);
    const { id, session } = sessions.create(principalKey(caller), tokenHash(token));
    setSessionCookie(req, res, id, Math.floor(sessions.idleMs / 1000));
    res.json({ principal: principalOf(caller), csrf: session.csrf, position: ctx.app.engine.durableHead() });
  });
}

/**
 * `GET /api/session` (who am I, and the CSRF token again after a reload) and `DELETE /api/session` (sign out): after the auth middleware.
 * Both session answers carry `position`, the log's durable head as they leave: the console opens its live feed
 * after it (`/api/events?after=position`), so an event between a page's REST load and the feed's connect is
 * not lost — every page loads after this answer, so what it loads is at least this current.
 */
export function mountSessionInfo(router: Router, sessions: SessionStore, ctx: McpContext): void {
  router.get('/session', (req, res) => {
    const session = res.locals.session as Session | undefined;
    if (session) setSessionCookie(req, res, sessionCookie(req)!, Math.floor(sessions.idleMs / 1000));
    res.json({
      principal: principalOf(callerOf(req)),
      csrf: session?.csrf ?? null,
      position: ctx.app.engine.durableHead(),
    });
  });
  router.delete('/session', (req, res) => {
    const id = res.locals.session ? sessionCookie(req) : null;
    if (id) {
      sessions.drop(id);
      clearSessionCookie(req, res);
    }
    res.status(204).end();
  });
}
