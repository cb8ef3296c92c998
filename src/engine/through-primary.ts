import type { StoredEvent } from './event.js';
import type { Replica } from './replica.js';
import { isWriteConflict } from './replica-record.js';

/**
 * A command's transaction on a replica (replica.ts), outside group commit: decided on the copy and written
 * through in one round trip; if another node wrote meanwhile (ErrWriteConflict, both sides rolled back) it
 * runs again, the primary's lock and catch-up first, so it cannot lose twice. `run` is the command's own
 * closure inside handle.ts's transaction: it has no effect outside the database, so running it again is
 * what a caller retrying the command would do.
 */
export function viaPrimary<T>(
  transaction: <R>(fn: () => R) => R,
  replica: Replica,
  caught: StoredEvent[],
  run: () => T,
): T {
  if (replica.contended) return transaction(() => throughPrimary(replica, caught, run, false));
  try {
    return transaction(() => throughPrimary(replica, caught, run, true));
  } catch (e) {
    if (!isWriteConflict(e)) throw e;
    return transaction(() => throughPrimary(replica, caught, run, false));
  }
}

function throughPrimary<T>(replica: Replica, caught: StoredEvent[], run: () => T, optimistic: boolean): T {
  caught.push(...replica.begin(optimistic));
  let value: T;
  try {
    value = run();
  } catch (e) {
    // A refusal decided on the copy is checked too: decided on a stale copy, it is decided again.
    if (optimistic) checkRefusal(replica);
    else replica.abort();
    throw e;
  }
  try {
    replica.commit();
  } catch (e) {
    replica.abort();
    throw e;
  }
  return value;
}

function checkRefusal(replica: Replica): void {
  try {
    replica.check();
  } catch (e) {
    if (isWriteConflict(e)) throw e;
    // The store away: the refusal stands, decided on the copy as it was.
  }
}
