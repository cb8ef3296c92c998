import type pg from 'pg';
import { DomainError } from '../../errors.js';
import type { EventRow } from '../event.js';
import type { ChainHead } from '../store.js';
import { int } from './connect.js';

/**
 * What a node's write reads once it holds its tenant's lock (pg/primary-worker.ts), and the check that
 * the node's copy is still on the store's chain.
 */
/**
 * The copy's head must be a row of the primary's chain: a copy ahead of it, or off it, is refused. A
 * restart mends it: on open a node throws such a copy away and copies the tenant again (pg/copy-file.ts).
 */
export function checkCopy(tenant: string, head: ChainHead, copy: ChainHead, storedHash: string | null): void {
  if (copy.position === 0 || storedHash === copy.hash) return;
  const restart = 'restart the node: it throws its copy away at start and copies the tenant again from the store';
  throw new DomainError(
    'ErrChainMismatch',
    copy.position > head.position
      ? `this node's copy of tenant ${tenant} is ahead of the store (position ${copy.position}, the store's head is ${head.position}): the store lost events; ${restart}`
      : `this node's copy of tenant ${tenant} differs from the store at position ${copy.position}: ${restart}`,
    { tenant, position: copy.position },
  );
}

interface LockedState {
  head: ChainHead | null;
  /** The store's hash at the copy's head position (null: it has no such row). */
  copyHash: string | null;
  epoch: number;
  rows: EventRow[];
  sequences: Array<[string, number]>;
}

/**
 * Everything a write needs once it holds the lock, in one round trip: the chain head, the store's row at
 * the copy's head, the read models' epoch, the rows other nodes committed since, the id marks.
 */
export async function lockedState(client: pg.ClientBase, tenant: string, after: ChainHead): Promise<LockedState> {
  const result = await client.query<{
    position: string | null;
    hash: string | null;
    copy_hash: string | null;
    epoch: number | null;
    rows: EventRow[] | null;
    sequences: Record<string, number> | null;
  }>(
    `SELECT c.position, c.hash,
            (SELECT hash FROM es_events WHERE tenant = $1 AND position = $2) AS copy_hash,
            (SELECT epoch FROM rm_tenant) AS epoch,
            (SELECT json_agg(e ORDER BY e.position) FROM (
               SELECT position, stream_id, version, type, schema_version, data, meta, recorded_at, prev_hash, hash
                 FROM es_events WHERE tenant = $1 AND position > $2) e) AS rows,
            (SELECT json_object_agg(name, value) FROM es_sequences WHERE tenant = $1) AS sequences
       FROM (SELECT 1) AS one LEFT JOIN es_chains c ON c.tenant = $1`,
    [tenant, after.position],
  );
  const r = result.rows[0]!;
  return {
    head: r.position === null ? null : { position: int(r.position), hash: r.hash! },
    copyHash: r.copy_hash,
    epoch: r.epoch ?? 0,
    rows: r.rows ?? [],
    sequences: Object.entries(r.sequences ?? {}),
  };
}
