import type { NextFunction, Request, Response } from 'express';
import * as z from 'zod';
import { DomainError, isDomainError } from '../errors.js';
import { actorOf } from '../mcp/auth.js';
import { type Caller } from '../events/principals.js';
import { speaker } from '../events/principals.js';
import { type Speaker } from '../events/principals.js';

/**
 * What every `/api` route file shares: the caller behind the request (set by api-auth.ts), the
 * owner-only guard, strict input parsing (bad input is ErrInvalidInput and writes nothing), and the
 * one place a DomainError becomes JSON `{error: {code, message, details?}}` with the status its code implies.
 */
export const STATUS: Record<string, number> = {
  ErrInvalidInput: 400,
  ErrInvalidScope: 400,
  ErrInvalidName: 400,
  ErrConfirmationInvalid: 400,
  ErrConfirmationMismatch: 400,
  ErrUnauthorized: 401,
  ErrForbidden: 403,
  ErrCsrf: 403,
  ErrApprovalModeForbidden: 403,
  ErrTaskNotFound: 404,
  ErrGoalNotFound: 404,
  ErrNotFound: 404,
  ErrProposalNotFound: 404,
  ErrIllegalTransition: 409,
  ErrGoalBudgetExceeded: 409,
  ErrRateLimited: 429,
  ErrWritesStopped: 503,
};

export const callerOf = (req: Request): Caller => req.auth!.extra!.caller as Caller;
export const speakerOf = (req: Request): Speaker => speaker(callerOf(req));
export const actor = (req: Request): { actor: string } => ({ actor: actorOf(callerOf(req)) });

/** The owner's actions are the owner's alone: an agent's session is refused before its input is even read. */
export function ownerOf(req: Request, what: string): Extract<Caller, { kind: 'owner' }> {
  const c = callerOf(req);
  if (c.kind !== 'owner')
    throw new DomainError(
      'ErrForbidden',
      `only the owner ${what}; agent ${c.name} may read the console but not act in it`,
    );
  return c;
}

/** Path and query integers are plain decimal digits (no `0x10`, `1e1`, ` 5` or `1.0` sneaking through Number()). */
export const Digits = z.string().regex(/^\d+$/, 'expected a decimal integer');
export const IntParam = (min: number, max: number) => Digits.transform(Number).pipe(z.number().int().min(min).max(max));
export const Id = IntParam(1, Number.MAX_SAFE_INTEGER);
/** An agent in a path: its name (unique in a tenant). */
export const AgentName = z.string().min(1).max(64);

export function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const at = [where, ...issue.path.map(String)].join('.');
  throw new DomainError('ErrInvalidInput', `${at}: ${issue.message}`, { field: at });
}

/** A JSON body (absent → `{}`), parsed strictly. */
export const body = <S extends z.ZodType>(schema: S, req: Request): z.infer<S> => parse(schema, req.body ?? {}, 'body');

export function domainErrors(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (!isDomainError(err)) return next(err);
  res
    .status(STATUS[err.code] ?? 409)
    .json({ error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) } });
}
