import type { ErrorRequestHandler, Request } from 'express';
import { isDomainError } from '../errors.js';
import { log } from '../log.js';

/**
 * OAuth's error answers — `{error, error_description}` with the status RFC 6749 §5.2 / RFC 7591 §3.2.2
 * give — and its abuse limits, per client address, on the model of the console's failed sign-ins
 * (session.ts): failed token requests, registrations and authorization requests each have a budget per
 * sliding minute; past it every attempt is refused (429, Retry-After) until the window clears.
 */
export class OAuthHttpError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly retryAfter = 0,
  ) {
    super(description);
  }
}

const DOMAIN_TO_OAUTH: Record<string, [string, number]> = {
  ErrOAuthInvalidGrant: ['invalid_grant', 400],
  ErrOAuthInvalidTarget: ['invalid_target', 400],
  ErrOAuthInvalidScope: ['invalid_scope', 400],
  ErrOAuthUnauthorizedClient: ['unauthorized_client', 400],
  ErrNotFound: ['invalid_grant', 400],
  ErrInvalidInput: ['invalid_request', 400],
};

/** A thrown error as the OAuth error it stands for; anything unexpected is a logged server_error. */
export function asOAuthError(err: unknown): OAuthHttpError {
  if (err instanceof OAuthHttpError) return err;
  if (isDomainError(err) && DOMAIN_TO_OAUTH[err.code]) {
    const [error, status] = DOMAIN_TO_OAUTH[err.code]!;
    return new OAuthHttpError(error, err.message, status);
  }
  const status = (err as { status?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return new OAuthHttpError('invalid_request', 'the request body could not be read', 400);
  log.error({ err }, 'oauth request failed');
  return new OAuthHttpError('server_error', 'internal error', 500);
}

export const oauthErrors: ErrorRequestHandler = (err, _req, res, _next) => {
  const e = asOAuthError(err);
  if (e.retryAfter > 0) res.setHeader('Retry-After', String(e.retryAfter));
  if (e.error === 'invalid_client' && e.status === 401) res.setHeader('WWW-Authenticate', 'Basic realm="colony"');
  res.status(e.status).set('Cache-Control', 'no-store').json({ error: e.error, error_description: e.description });
};

/** Attempts per key (an address, with its client) in a sliding minute; past the limit every attempt is refused until it clears. */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
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

export const addressOf = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/**
 * A budget of attempts per client address per minute — and, where the request names its OAuth client,
 * per address and client: every local caller is 127.0.0.1, so one misbehaving client (or an agent on the
 * host) must not lock every other local client out of refreshing its tokens.
 */
export class RateGate {
  constructor(
    private readonly limiter: FailureLimiter,
    private readonly what: string,
  ) {}

  /** Refuses (429) when the address (with this client) has spent its budget. */
  check(req: Request, client?: string): void {
    const wait = this.limiter.retryAfter(keyOf(req, client));
    if (wait > 0)
      throw new OAuthHttpError(
        'invalid_request',
        `too many ${this.what} from this address: try again in ${wait} s`,
        429,
        wait,
      );
  }

  count(req: Request, client?: string): void {
    this.limiter.fail(keyOf(req, client));
  }
}

const keyOf = (req: Request, client?: string): string => (client ? `${addressOf(req)} ${client}` : addressOf(req));

export interface OAuthLimits {
  /** Failed token and revocation requests (a guessed code, verifier or refresh token). */
  token: RateGate;
  /** Client registrations, failed or not (each one costs memory until it is dropped). */
  register: RateGate;
  /** Authorization requests, refused ones too (each may fetch a metadata document or wait in memory for 10 minutes). */
  authorize: RateGate;
}

export function defaultLimits(now: () => number = Date.now): OAuthLimits {
  return {
    token: new RateGate(new FailureLimiter(20, 60_000, now), 'failed token requests'),
    register: new RateGate(new FailureLimiter(10, 60_000, now), 'client registrations'),
    authorize: new RateGate(new FailureLimiter(30, 60_000, now), 'authorization requests'),
  };
}
