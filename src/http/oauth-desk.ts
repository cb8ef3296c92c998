import type { AuthorizeDeps } from './oauth-authorize.js';
import { settle } from './oauth-decision.js';
import type { PendingRequest } from './oauth-requests.js';

/**
 * The console's view of this process's authorization requests (api-oauth.ts). The requests and codes stay
 * owned by mountOAuth (oauth.ts); the desk only reads them, settling each against the log first — the same
 * step as the waiting page's status poll — so a request decided anywhere (the CLI, the page's buttons, the
 * console) leaves the list at once, and a console decision reaches the waiting page on its next poll.
 */
export class OAuthDesk {
  constructor(private readonly d: Pick<AuthorizeDeps, 'app' | 'codes' | 'issuer' | 'requests'>) {}

  /** Requests no decision has reached yet, newest first. */
  waiting(): PendingRequest[] {
    for (const r of this.d.requests.waiting()) settle(this.d, r);
    return this.d.requests.waiting().sort((a, b) => b.createdAt - a.createdAt);
  }

  /** The live request showing `userCode` (decided or not, settled), or null when none does (never shown, or expired). */
  find(userCode: string): PendingRequest | null {
    const r = this.d.requests.byCode(userCode);
    if (r) settle(this.d, r);
    return r;
  }

  /** After a decision is recorded: the request's outcome now, so the page's next poll sends the browser on. */
  settle(r: PendingRequest): void {
    settle(this.d, r);
  }
}
