import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A grouped caller of group-commit.ts: the batches its commands joined, and the context (`grouped`) that
 * tells a command whose caller it runs for.
 */
export interface Ticket {
  /** The batches this caller's commands joined and that have not committed yet; it answers once none is left. */
  batches: Set<{ readonly committed: Promise<void> }>;
  /**
   * False once the call settled. Work the call started and left running (a timer, a process it spawned)
   * still carries its context; such work is no longer the caller's and commits on its own.
   */
  open: boolean;
  /** On a replica: the caller can run again if its batch lost a race (`run`'s `retry`); it may join an optimistic batch. */
  retry: boolean;
  /** One of its batches committed: running the caller again would repeat that batch's commands. */
  committed: boolean;
}

export const grouped = new AsyncLocalStorage<Ticket>();

export const newTicket = (retry: boolean): Ticket => ({ batches: new Set(), open: true, retry, committed: false });

export async function attempt<T>(
  ticket: Ticket,
  fn: () => Promise<T> | T,
  visible: () => Promise<void> | null,
): Promise<T> {
  try {
    return await grouped.run(ticket, fn);
  } finally {
    ticket.open = false;
    // What fn read may be a batch open or committed but still syncing: the answer waits for what is visible now.
    const seen = visible();
    // Whether fn answered or threw, its writes so far are not done until their COMMIT: a failed one
    // turns the answer into CommitFailedError, whatever fn said.
    for (const batch of ticket.batches) await batch.committed;
    await seen;
  }
}
