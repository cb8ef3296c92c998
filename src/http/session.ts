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
 * opens more than 64 (the least recently used goes). Failed sign-ins are limited per client address.
 */
export const SESSION_COOKIE = 'colony_session';
export const SESSION_IDLE_MS = 12 * 3600_000;
export const SESSIONS_PER_PRINCIPAL = 64;
export const SESSIONS_MAX = 10_000;
export const SIGNIN_FAILURES_PER_MINUTE = 10;

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

/** Failed sign-ins per client address in a sliding minute; past the limit every attempt is refused (429) until the window clears. */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit = SIGNIN_FAILURES_PER_MINUTE,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 10_000,
  ) {}

  /** Seconds until `address` may try again; 0 when it may now. */
  retryAfter(address: string): number {
    const recent = this.recent(address);
    return recent.length < this.limit ? 0 : Math.max(1, Math.ceil((recent[0]! + this.windowMs - this.now()) / 1000));
  }

  fail(address: string): void {
    const recent = this.recent(address);
    recent.push(this.now());
    this.failures.delete(address);
    if (this.failures.size >= this.maxKeys) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(address, recent.slice(-this.limit));
  }

  private recent(address: string): number[] {
    const cutoff = this.now() - this.windowMs;
    return (this.failures.get(address) ?? []).filter((t) => t > cutoff);
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
export function mountSignIn(router: Router, ctx: McpContext, sessions: SessionStore, limiter: FailureLimiter): void {
  router.post('/session', express.json({ limit: '4kb' }), (req, res) => {
    if (crossOrigin(req)) throw new DomainError('ErrCsrf', 'sign-in from another origin is refused');
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const wait = limiter.retryAfter(address);
    if (wait > 0) {
      res.setHeader('Retry-After', String(wait));
      throw new DomainError('ErrRateLimited', `too many failed sign-ins from this address: try again in ${wait} s`, {
        retry_after_sec: wait,
      });
    }
    const { token } = body(SignIn, req);
    const caller = ctx.auth.authenticate(token);
    if (!caller) {
      limiter.fail(address);
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
    res.json({ principal: principalOf(caller), csrf: session.csrf });
  });
}

/** `GET /api/session` (who am I, and the CSRF token again after a reload) and `DELETE /api/session` (sign out): after the auth middleware. */
export function mountSessionInfo(router: Router, sessions: SessionStore): void {
  router.get('/session', (req, res) => {
    const session = res.locals.session as Session | undefined;
    if (session) setSessionCookie(req, res, sessionCookie(req)!, Math.floor(sessions.idleMs / 1000));
    res.json({ principal: principalOf(callerOf(req)), csrf: session?.csrf ?? null });
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
