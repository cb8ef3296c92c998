import type pg from 'pg';
import { DomainError } from '../../errors.js';
import type { EventRow } from '../event.js';
import { rowHash } from '../hash.js';
import { toStoredEvent, type ChainHead } from '../store.js';
import type { TenantEvent } from '../store-port.js';
import type { PrimaryWrite } from '../replica.js';
import { int } from './connect.js';
import { eventColumns, INSERT_EVENTS } from './rows.js';
import { streamMarks } from './sequences.js';

/**
 * A node's write (engine/replica.ts) into the tenant's log, under the lock its `lock` took: the rows, the
 * chain head, the commands they carry and the keyed ones that appended nothing, and the id marks — in
 * one statement, so a write costs a round trip here rather than one per table. The rows come from the
 * node's copy, which the lock checked is on the store's chain; each must still continue it (position,
 * prev_hash, hash), and a stream version taken twice is refused by the log's own unique key.
 */
export async function commitRows(
  client: pg.ClientBase,
  tenant: string,
  head: ChainHead,
  write: PrimaryWrite,
): Promise<TenantEvent[]> {
  checkContinues(tenant, head, write.rows);
  const result = await client.query<{ position: string; global_seq: string; txid: string }>({
    name: 'colony_commit_rows',
    ...commitRowsStatement(tenant, write),
  });
  const order = new Map(result.rows.map((r) => [int(r.position), { txid: r.txid, seq: int(r.global_seq) }]));
  return write.rows.map((r) => ({ ...toStoredEvent(r), tenant, cursor: order.get(r.position)! }));
}

/** The statement of `commitRows` and its values (pg/one-trip.ts sends it with the values written in). */
export function commitRowsStatement(tenant: string, write: PrimaryWrite): { text: string; values: unknown[] } {
  const { rows } = write;
  const spans = commandSpans(rows);
  for (const c of write.empty) spans.set(c.id, { first: null, last: null, at: c.at });
  const marks = streamMarks(rows.map((r) => r.stream_id));
  for (const [name, value] of write.sequences) marks.set(name, Math.max(value, marks.get(name) ?? 0));
  const last = rows[rows.length - 1];
  return {
    text: `WITH ins AS (${INSERT_EVENTS}), head AS (
       UPDATE es_chains SET position = $12, hash = $13 WHERE tenant = $1 AND $12::bigint IS NOT NULL
     ), cmd AS (
       INSERT INTO es_commands (tenant, command_id, first_position, last_position, committed_at)
       SELECT $1, * FROM unnest($14::text[], $15::bigint[], $16::bigint[], $17::text[]) ON CONFLICT DO NOTHING
     ), seq AS (
       INSERT INTO es_sequences (tenant, name, value) SELECT $1, * FROM unnest($18::text[], $19::bigint[])
       ON CONFLICT (tenant, name) DO UPDATE SET value = GREATEST(es_sequences.value, excluded.value)
     )
     SELECT position, global_seq, transaction_id::text AS txid, pg_notify('colony_events', $1) FROM ins`,
    values: [
      tenant,
      ...eventColumns(rows),
      last?.position ?? null,
      last?.hash ?? null,
      [...spans.keys()],
      [...spans.values()].map((s) => s.first),
      [...spans.values()].map((s) => s.last),
      [...spans.values()].map((s) => s.at),
      [...marks.keys()],
      [...marks.values()],
    ],
  };
}

export function checkContinues(tenant: string, head: ChainHead, rows: readonly EventRow[]): void {
  let at = head;
  for (const row of rows) {
    if (row.position !== at.position + 1 || row.prev_hash !== at.hash || rowHash(row) !== row.hash)
      throw new DomainError('ErrChainMismatch', `row ${row.position} does not continue tenant ${tenant}'s chain`, {
        tenant,
        position: row.position,
      });
    at = { position: row.position, hash: row.hash };
  }
}

/** Each command the rows carry, with its first and last position (a command's rows are contiguous). */
function commandSpans(rows: readonly EventRow[]) {
  const spans = new Map<string, { first: number | null; last: number | null; at: string }>();
  for (const row of rows) {
    const id = (JSON.parse(row.meta) as { commandId: string }).commandId;
    const span = spans.get(id);
    if (span) span.last = row.position;
    else spans.set(id, { first: row.position, last: row.position, at: row.recorded_at });
  }
  return spans;
}
