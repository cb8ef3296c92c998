import { randomUUID, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors.js';

/**
 * One-use confirmation tokens for destructive owner tools, as codomyrmex confirms them: a token
 * lives 60 s, is bound to the tool, to a sha256 of the exact validated arguments and to the caller, and
 * is consumed by the first attempt to redeem it — even one that fails a check.
 */
export const CONFIRMATION_TTL_MS = 60_000;

interface Pending {
  tool: string;
  digest: string;
  caller: string;
  expiresAt: number;
}

export class Confirmations {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly now: () => number = Date.now) {}

  issue(tool: string, digest: string, caller: string): string {
    this.purge();
    const token = randomUUID();
    this.pending.set(token, { tool, digest, caller, expiresAt: this.now() + CONFIRMATION_TTL_MS });
    return token;
  }

  redeem(token: string, tool: string, digest: string, caller: string): void {
    this.purge();
    const entry = this.pending.get(token);
    this.pending.delete(token);
    if (!entry) throw new DomainError('ErrConfirmationInvalid', 'invalid or expired confirmation token');
    if (entry.tool !== tool) throw new DomainError('ErrConfirmationMismatch', 'confirmation token does not match tool');
    if (entry.caller !== caller)
      throw new DomainError('ErrConfirmationMismatch', 'confirmation token was issued to another caller');
    if (!timingSafeEqual(Buffer.from(entry.digest), Buffer.from(digest))) {
      throw new DomainError('ErrConfirmationMismatch', 'confirmation token does not match arguments');
    }
  }

  private purge(): void {
    const now = this.now();
    for (const [token, entry] of this.pending) if (entry.expiresAt <= now) this.pending.delete(token);
  }
}
