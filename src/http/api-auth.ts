import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { DomainError } from '../errors.js';
import { actorOf, callerOfHash, principalKey } from '../mcp/auth.js';
import type { McpContext } from '../mcp/context.js';
import { clearSessionCookie, crossOrigin, csrfMatches, sessionCookie, type SessionStore } from './session.js';
import { type Caller } from '../events/principals.js';

/**
 * Who calls `/api`: a program with `Authorization: Bearer <owner token>` (the `api` scope; 401 with
 * WWW-Authenticate when missing or bad, 403 without the scope — as before the console), or a browser
 * with the console's session cookie (owners and agents). A cookie-authenticated request that changes
 * anything (POST, PUT, PATCH, DELETE) must carry the session's `X-CSRF-Token` and must not come from
 * another origin (403 ErrCsrf, nothing done). Either way `req.auth` is the MCP SDK's AuthInfo shape with
 * the caller in `extra.caller`; `res.locals.session` is the session when there is one.
 */
const FAR_FUTURE = Math.floor(Date.UTC(2100, 0, 1) / 1000);
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export function apiAuth(ctx: McpContext, sessions: SessionStore): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization;
    if (header !== undefined) return void authorize(req, fromBearer(ctx, res, header), next, header.split(' ')[1]!);
    const id = sessionCookie(req);
    if (id === null) throw unauthorized(res, 'invalid_token', 'Missing Authorization header or session cookie');
    const session = sessions.find(id);
    const caller = session && callerOfHash(ctx.app, session.tokenHash);
    if (!session || !caller || principalKey(caller) !== session.principal) {
      sessions.drop(id);
      clearSessionCookie(req, res);
      throw new DomainError(
        'ErrUnauthorized',
        'the session has ended (signed out, idle for 12 h, or its token was revoked): sign in again',
      );
    }
    if (!SAFE.has(req.method)) {
      if (crossOrigin(req)) throw new DomainError('ErrCsrf', 'a request from another origin is refused');
      if (!csrfMatches(req.header('x-csrf-token'), session.csrf))
        throw new DomainError('ErrCsrf', 'missing or wrong X-CSRF-Token header (GET /api/session gives it)');
    }
    res.locals.session = session;
    authorize(req, caller, next, '');
  };
}

function fromBearer(ctx: McpContext, res: Response, header: string): Caller {
  const [type, token] = header.split(' ');
  if (type?.toLowerCase() !== 'bearer' || !token)
    throw unauthorized(res, 'invalid_token', "Invalid Authorization header format, expected 'Bearer TOKEN'");
  const caller = ctx.auth.authenticate(token);
  if (!caller) throw unauthorized(res, 'invalid_token', 'unknown or revoked token');
  if (!caller.scopes.includes('api')) {
    res.set('WWW-Authenticate', wwwAuthenticate('insufficient_scope', 'Insufficient scope'));
    throw new DomainError(
      'ErrForbidden',
      'this token lacks the api scope (agent tokens use /mcp, or sign in to the console)',
    );
  }
  return caller;
}

/** `token` is the bearer token, or '' for a cookie session (the server never holds the token behind one). */
function authorize(req: Request, caller: Caller, next: NextFunction, token: string): void {
  req.auth = { token, clientId: actorOf(caller), scopes: caller.scopes, expiresAt: FAR_FUTURE, extra: { caller } };
  next();
}

const wwwAuthenticate = (code: string, message: string): string =>
  `Bearer error="${code}", error_description="${message}", scope="api"`;

function unauthorized(res: Response, code: string, message: string): DomainError {
  res.set('WWW-Authenticate', wwwAuthenticate(code, message));
  return new DomainError('ErrUnauthorized', message);
}
