import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { ClientInfo } from '../actions/oauth.js';
import type { CodeFacts } from '../commands/oauth.js';
import { USER_CODE_ALPHABET, type OAuthScope } from '../events/oauth.js';

/**
 * What the serving process holds in memory for OAuth, never in the log: authorization requests waiting
 * for the owner (10 min; found by a random 256-bit id from the waiting page, or by the short user code
 * the owner types into `colony oauth approve`), and issued authorization codes (2 min, single use; kept
 * after use until they expire so that a replay can revoke the grant the code produced). Both are capped:
 * past the cap the oldest goes, so a flood costs bounded memory. Times are the engine clock's (ms).
 */
export const REQUEST_TTL_MS = 10 * 60_000;
export const CODE_TTL_MS = 2 * 60_000;
export const MAX_PENDING_REQUESTS = 100;
const MAX_CODES = 1000;

export type Outcome = { status: 'approved' | 'denied'; redirect: string };

export interface PendingRequest {
  id: string;
  userCode: string;
  client: ClientInfo;
  redirectUri: string;
  /** Whether the client named redirect_uri (then the token request must repeat it). */
  redirectUriGiven: boolean;
  state: string | null;
  codeChallenge: string;
  resource: string;
  scopes: OAuthScope[];
  /** Engine-clock ms; the console lists requests by it. */
  createdAt: number;
  expiresAt: number;
  /** The log's head when the request was made: only a decision recorded after it can settle it. */
  afterPosition: number;
  outcome: Outcome | null;
}

export class PendingRequests {
  private readonly byId = new Map<string, PendingRequest>();

  constructor(
    private readonly now: () => number,
    private readonly cap = MAX_PENDING_REQUESTS,
  ) {}

  create(fields: Omit<PendingRequest, 'id' | 'userCode' | 'createdAt' | 'expiresAt' | 'outcome'>): PendingRequest {
    this.purge();
    while (this.byId.size >= this.cap) this.byId.delete(this.byId.keys().next().value!);
    let userCode = newUserCode();
    while (this.byCode(userCode)) userCode = newUserCode();
    const createdAt = this.now();
    const request = {
      ...fields,
      id: randomBytes(32).toString('hex'),
      userCode,
      createdAt,
      expiresAt: createdAt + REQUEST_TTL_MS,
      outcome: null,
    };
    this.byId.set(request.id, request);
    return request;
  }

  get(id: string): PendingRequest | null {
    const r = this.byId.get(id);
    if (r && r.expiresAt <= this.now()) this.byId.delete(id);
    return r && r.expiresAt > this.now() ? r : null;
  }

  byCode(userCode: string): PendingRequest | null {
    for (const r of this.byId.values()) if (r.userCode === userCode && r.expiresAt > this.now()) return r;
    return null;
  }

  /** Requests still waiting for a decision (the serving process checks the log for theirs). */
  waiting(): PendingRequest[] {
    this.purge();
    return [...this.byId.values()].filter((r) => r.outcome === null);
  }

  private purge(): void {
    for (const [id, r] of this.byId) if (r.expiresAt <= this.now()) this.byId.delete(id);
  }
}

/** 8 characters of a 32-letter alphabet (40 bits), `WXYZ-2345`: typed by a person, so short; valid 10 minutes, so enough. */
function newUserCode(): string {
  const chars = Array.from({ length: 8 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]);
  return `${chars.slice(0, 4).join('')}-${chars.slice(4).join('')}`;
}

export interface IssuedCode {
  facts: CodeFacts;
  client: ClientInfo;
  redirectUriGiven: boolean;
  expiresAt: number;
  used: boolean;
  /** The grant the code was redeemed for: revoked if the code comes back. */
  grantN: number | null;
}

/** Authorization codes by sha256 (a memory dump holds no usable code). */
export class AuthCodes {
  private readonly codes = new Map<string, IssuedCode>();

  constructor(private readonly now: () => number) {}

  issue(facts: Omit<CodeFacts, 'expiresAt'>, client: ClientInfo, redirectUriGiven: boolean): string {
    for (const [key, c] of this.codes) if (c.expiresAt <= this.now()) this.codes.delete(key);
    while (this.codes.size >= MAX_CODES) this.codes.delete(this.codes.keys().next().value!);
    const code = randomBytes(32).toString('base64url');
    const expiresAt = this.now() + CODE_TTL_MS;
    this.codes.set(keyOf(code), {
      facts: { ...facts, expiresAt: new Date(expiresAt).toISOString() },
      client,
      redirectUriGiven,
      expiresAt,
      used: false,
      grantN: null,
    });
    return code;
  }

  /**
   * The code's entry, as it was before this call, and marks it used: every redemption attempt spends the
   * code, a failed one included (a guessed verifier gets one try). Expired entries are still returned
   * until purged: the decider reports the expiry.
   */
  take(code: string): IssuedCode | null {
    const entry = this.codes.get(keyOf(code));
    if (!entry) return null;
    const before = { ...entry };
    entry.used = true;
    return before;
  }

  redeemed(code: string, grantN: number): void {
    const entry = this.codes.get(keyOf(code));
    if (entry) entry.grantN = grantN;
  }
}

const keyOf = (code: string): string => createHash('sha256').update(code).digest('hex');
