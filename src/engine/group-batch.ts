import type { StoredEvent } from './event.js';
import type { SqlStep } from './projection-sql.js';

/**
 * One group-commit batch (group-commit.ts): the commands that share a transaction, the events they
 * appended, the writes held to its end, and the promise its callers wait on; and how a failed COMMIT reads.
 */

/** A COMMIT that failed: the batch's commands were all rolled back. */
export class CommitFailedError extends Error {
  constructor(readonly cause: unknown) {
    super(`the batch's COMMIT failed and its commands were rolled back: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

export class Batch {
  readonly events: StoredEvent[] = [];
  /** Its commands' projection writes that wait for its end (projection-sql.ts `later`), run before its COMMIT. */
  readonly held: SqlStep[] = [];
  commands = 0;
  /**
   * Its first command found the log's tail where the anchor says (engine/anchor.ts). The batch holds the
   * write lock from its BEGIN and only its own commands append (each moving the anchor with the tail, or
   * rolling both back), so the tail cannot move behind the later commands' backs: they skip the check.
   */
  anchored = false;
  /** Its COMMIT skips the fsync; `WalSync` releases it once the WAL is on disk. */
  deferred = false;
  readonly committed: Promise<void>;
  resolve!: () => void;
  reject!: (e: unknown) => void;
  /** On a replica: decided without the primary's lock (replica.ts), checked at its COMMIT. */
  constructor(readonly optimistic: boolean) {
    this.committed = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // A batch nobody awaits (every caller failed first) must not become an unhandled rejection.
    this.committed.catch(() => undefined);
  }
}

/**
 * Commands per batch at most. Requests arriving over sockets always let the COMMIT run between turns of
 * the event loop; a caller that loops on promises alone never would, so a batch this full commits first.
 */
export const MAX_BATCH = 256;
