import type pg from 'pg';
import { isDomainError } from '../../errors.js';
import { log } from '../../log.js';
import type { ChainHead } from '../store.js';
import { beginLocked } from './chain.js';
import type { PgEventStore } from './store.js';
import type { WireError } from './sync-worker.js';

/** A connection of the primary's worker (pg/primary-worker.ts) in a transaction on the tenant's chain. */
export interface Held {
  client: pg.PoolClient;
  head: ChainHead;
}

/** The lock waits at most this long for another node's transaction on the tenant: then the command fails. */
const LOCK_TIMEOUT = '10s';
/**
 * A node cut off from the store while it holds the lock (a partition, a hung process) would hold it until
 * TCP gives up — hours. A batch holds it for milliseconds, so PostgreSQL ends a session idle in its
 * transaction this long, releasing the lock; that node's COMMIT then fails and its callers are told so.
 */
const IDLE_TIMEOUT = '15s';

const LIMITS = `SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'; SET LOCAL idle_in_transaction_session_timeout = '${IDLE_TIMEOUT}'`;

export function lockedBegin(store: PgEventStore, tenant: string): string {
  return beginLocked(store.target.schema, tenant, store.readModels.searchPath(tenant), LIMITS);
}

/** The same without the lock, which a one-round-trip write takes itself (pg/one-trip.ts). */
export function unlockedBegin(store: PgEventStore, tenant: string): string {
  return `BEGIN; ${LIMITS}; ${store.readModels.searchPath(tenant)}`;
}

export async function release(h: Held, rollback: boolean): Promise<void> {
  let broken: Error | undefined;
  if (rollback) await h.client.query('ROLLBACK').catch((e: Error) => (broken = e));
  h.client.off('error', ignore);
  h.client.release(broken);
}

export const ignore = (): void => undefined;

export function wire(e: unknown): WireError {
  if (isDomainError(e)) return { message: e.message, code: e.code, details: { ...(e.details ?? {}) } };
  const pgCode = (e as { code?: string }).code;
  if (pgCode === '55P03')
    return {
      message: `another node held the tenant's write lock for over ${LOCK_TIMEOUT}; try again`,
      code: 'ErrBusy',
    };
  // The driver's words may name the server (a refused connection): they go to the node's log, and the
  // caller — an agent, maybe — gets the SQLSTATE only.
  log.error({ err: e }, 'the PostgreSQL store failed');
  const state = typeof pgCode === 'string' && /^[0-9A-Z]{5}$/.test(pgCode) ? ` (SQLSTATE ${pgCode})` : '';
  return {
    message: `the store failed${state}; the node's log has the details; try again`,
    code: 'ErrStoreUnavailable',
  };
}
