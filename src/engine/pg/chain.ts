import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { StoredEvent } from '../event.js';
import { GENESIS_HASH } from '../hash.js';
import type { ChainHead } from '../store.js';
import { int } from './connect.js';
import { PG_EVENT_COLUMNS, storedEvent, type PgEventRow } from './rows.js';

/**
 * A tenant's chain on PostgreSQL: the lock that serializes its appends and what an append reads under it.
 *
 * The lock is a transaction-scoped advisory lock, not `SELECT … FOR UPDATE` on the head row: locking a
 * row assigns the transaction its id (xid) before it waits, so appends queued on one tenant would get ids
 * in arrival order rather than lock order, and readers, who follow (transaction id, sequence), would see
 * a tenant's chain out of order — version 2 of a stream before version 1. An advisory lock assigns no
 * id; the first insert after it does, so within a tenant the id order is the chain order.
 */
export function beginLocked(schema: string, tenant: string, then?: string, before?: string): string {
  const key = chainKey(schema, tenant);
  return `BEGIN; ${before ? `${before}; ` : ''}SELECT pg_advisory_xact_lock(${key})${then ? `; ${then}` : ''}`;
}

/**
 * The tenant's lock key, computed here, a 64-bit integer, so it can go in the same round trip as BEGIN. It
 * names the schema too: two Colonies (or test runs) sharing a database never wait for each other's tenants.
 */
export function chainKey(schema: string, tenant: string): bigint {
  return createHash('sha256').update(`colony:chain:${schema}:${tenant}`).digest().readBigInt64BE(0);
}

export interface ChainState {
  head: ChainHead;
  /** The stream's version (0 when it has no events). */
  version: number;
  /** The positions a command id already committed (null: it never did; first null: it appended nothing). */
  command: { first: number | null; last: number | null } | null;
}

/**
 * Everything an append needs, in one statement under the lock. It must be a statement after the one
 * that took the lock: under READ COMMITTED its snapshot then holds every append committed before ours.
 * The tenant's head row is created at its first append.
 */
export async function readChain(
  client: pg.ClientBase,
  tenant: string,
  streamId: string | null,
  commandId: string | null,
  /** Create the tenant's head row if it has none (under the lock; false for a read outside it). */
  create = true,
): Promise<ChainState> {
  const read = () =>
    client.query<{
      position: string | null;
      hash: string | null;
      version: number | null;
      command: [string | null, string | null] | null;
    }>(
      `SELECT c.position, c.hash,
              (SELECT MAX(version) FROM es_events WHERE tenant = $1 AND stream_id = $2) AS version,
              (SELECT json_build_array(first_position::text, last_position::text) FROM es_commands
                WHERE tenant = $1 AND command_id = $3) AS command
         FROM (SELECT 1) AS one LEFT JOIN es_chains c ON c.tenant = $1`,
      [tenant, streamId, commandId],
    );
  let row = (await read()).rows[0]!;
  if (row.position === null && create) {
    await client.query('INSERT INTO es_chains (tenant, position, hash) VALUES ($1, 0, $2)', [tenant, GENESIS_HASH]);
    row = (await read()).rows[0]!;
  }
  const [first, last] = row.command ?? [null, null];
  return {
    head:
      row.position === null ? { position: 0, hash: GENESIS_HASH } : { position: int(row.position), hash: row.hash! },
    version: row.version ?? 0,
    command: row.command ? { first: first === null ? null : int(first), last: last === null ? null : int(last) } : null,
  };
}

/** The events of a command that committed before (a retry's answer), in order. */
export async function eventsOf(
  client: pg.ClientBase,
  tenant: string,
  command: NonNullable<ChainState['command']>,
): Promise<StoredEvent[]> {
  if (command.first === null) return [];
  const events = await client.query<PgEventRow>(
    `SELECT ${PG_EVENT_COLUMNS} FROM es_events WHERE tenant = $1 AND position BETWEEN $2 AND $3 ORDER BY position`,
    [tenant, command.first, command.last],
  );
  return events.rows.map(storedEvent);
}

export async function recordEmptyCommand(client: pg.ClientBase, tenant: string, command: { id: string; at: string }) {
  await client.query('INSERT INTO es_commands (tenant, command_id, committed_at) VALUES ($1, $2, $3)', [
    tenant,
    command.id,
    command.at,
  ]);
}
