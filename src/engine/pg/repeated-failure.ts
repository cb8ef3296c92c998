import { isDomainError } from '../../errors.js';

/** How long a failure has gone on: since its first attempt, and how many attempts failed. */
export interface Failing {
  since: Date;
  attempts: number;
}

export interface FailureReports {
  /** A failure began, changed (another code or position: failureKey), or goes on: `reminder` says the last. */
  onError?(e: unknown, failing: Failing & { reminder: boolean }): void;
  /** An attempt worked after failures: told once. */
  onRecovered?(failing: Failing): void;
}

/** Once every five minutes while a failure goes on: often enough to be seen, rarely enough to be read. */
export const REMIND_MS = 5 * 60_000;

/**
 * Turns a job retried every second into reports a person can read: the first failure at once, the same
 * failure again only as a reminder every `remindMs` (with how long and how often), a different one at
 * once, and the recovery once. A store that lost rows fails the same way on every poll; a line per second
 * buries everything else in the log and says nothing the first line did not.
 */
export class RepeatedFailure {
  private failing: (Failing & { error: unknown; key: string; remindAt: number }) | null = null;

  constructor(
    private readonly reports: FailureReports,
    private readonly now: () => number = Date.now,
    private readonly remindMs = REMIND_MS,
  ) {}

  failed(e: unknown): void {
    const key = failureKey(e);
    const now = this.now();
    const same = this.failing?.key === key;
    const failing = same ? this.failing! : { since: new Date(now), attempts: 0, error: e, key, remindAt: now };
    this.failing = failing;
    failing.error = e;
    failing.attempts++;
    if (now < failing.remindAt) return;
    failing.remindAt = now + this.remindMs;
    this.reports.onError?.(e, { since: failing.since, attempts: failing.attempts, reminder: same });
  }

  /** The failure going on now, with its last error (null: the last attempt worked). */
  current(): (Failing & { error: unknown }) | null {
    const f = this.failing;
    return f && { since: f.since, attempts: f.attempts, error: f.error };
  }

  succeeded(): void {
    const failing = this.failing;
    if (!failing) return;
    this.failing = null;
    this.reports.onRecovered?.({ since: failing.since, attempts: failing.attempts });
  }
}

/**
 * What makes two failures the same one: never their text, which moves on its own (ErrChainBroken names the
 * head, which other nodes' appends move; a store away fails as a refused connection, then a timeout) —
 * a domain error's code and the position it names, else the error's code or class.
 */
function failureKey(e: unknown): string {
  if (isDomainError(e)) return `${e.code}@${String(e.details?.position ?? '')}`;
  if (e instanceof Error) return String((e as NodeJS.ErrnoException).code ?? e.name);
  return String(e);
}
