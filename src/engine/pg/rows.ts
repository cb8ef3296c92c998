import type pg from 'pg';
import type { EventRow, StoredEvent } from '../event.js';
import { GENESIS_HASH } from '../hash.js';
import { toStoredEvent, type ChainHead, type ReadStreamOptions } from '../store.js';
import type { TenantEvent } from '../store-port.js';
import { DomainError } from '../../errors.js';
import { int } from './connect.js';

/** Rows of `es_events` as PostgreSQL returns them (int8 as text), and their conversions. */
/** An `es_events` row as read here: EventRow's columns with int8 as text, plus the tenant and the global order. */
export type PgEventRow = Omit<EventRow, 'position'> & {
  tenant: string;
  position: string;
  global_seq: string;
  txid: string;
};

export const PG_EVENT_COLUMNS =
  'tenant, position, global_seq, transaction_id::text AS txid, stream_id, version, type, schema_version, data, meta, recorded_at, prev_hash, hash';

/**
 * The global order: (transaction id, global sequence) after a cursor. `fenced` reads only below the
 * oldest transaction still running, so an append that took a lower sequence number but commits later is
 * never passed over; unfenced only where no append can be in flight (a rebuild's swap).
 */
export const orderedRead = (fenced: boolean): string =>
  `SELECT ${PG_EVENT_COLUMNS} FROM es_events
    WHERE (transaction_id, global_seq) > ($1::xid8, $2::bigint)
      ${fenced ? 'AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())' : ''}
    ORDER BY transaction_id, global_seq LIMIT $3`;

/**
 * A page of a tenant's rows in chain order: at most $3 after position $2. A tenant's positions run 1, 2, 3…
 * without a gap (each row's prev_hash is its predecessor's hash), so the page lies in ($2, $2 + $3] and the
 * query says so: whatever plan PostgreSQL picks reads only that range. Without the bound, statistics that
 * do not know the tenant's size yet (a tenant just moved in by `colony migrate --to`) gave a bitmap scan of
 * every row after $2 and a sort on disk for each page — a first copy of 1M events took minutes, and longer
 * the further it got.
 */
export const TENANT_PAGE = `SELECT ${PG_EVENT_COLUMNS} FROM es_events
    WHERE tenant = $1 AND position > $2 AND position <= $2::bigint + $3::bigint ORDER BY position LIMIT $3`;

/**
 * A tenant's rows in chain order after a position, with their hashes, as the store holds them: `colony
 * verify` reads them so and names a hole itself; what takes them as the record reads readWholeTenantRows.
 */
export async function readTenantRows(
  client: pg.ClientBase | pg.Pool,
  tenant: string,
  afterPosition: number,
  limit: number,
): Promise<EventRow[]> {
  const result = await client.query<PgEventRow>(TENANT_PAGE, [tenant, afterPosition, limit]);
  return result.rows.map(eventRow);
}

/**
 * A page of a tenant's rows for whatever takes them as the whole record (a node's copy, an export), never
 * a silent prefix of it. A page is read as its range (TENANT_PAGE), so rows deleted from the store behind
 * its back (only possible with its append-only triggers disabled) would read as a short page — "caught
 * up" — if nothing said otherwise: the head every append moved says otherwise. It is read first, so every
 * row up to it was committed before the page is read and must be in it: fewer rows than that is a hole,
 * named (ErrChainBroken), not taken as the end of the log; so is a gap between the rows it holds.
 * `colony verify` names the same damage.
 */
export async function readWholeTenantRows(
  client: pg.ClientBase | pg.Pool,
  tenant: string,
  afterPosition: number,
  limit: number,
): Promise<EventRow[]> {
  const head = await recordedHead(client, tenant);
  const rows = await readTenantRows(client, tenant, afterPosition, limit);
  checkWhole(tenant, rows, afterPosition, head.position, limit);
  return rows;
}

/**
 * Rows after `after` as the record must have them: every position up to the recorded head (or `limit` of
 * them), without a gap — counting alone is not enough where appends go on (no lock held): a row committed
 * after the head was read can fill the count of a page with a hole in it. Else ErrChainBroken, naming
 * the first missing position.
 */
export function checkWhole(
  tenant: string,
  rows: readonly EventRow[],
  after: number,
  headPosition: number,
  limit = Number.MAX_SAFE_INTEGER,
): void {
  const expected = Math.max(0, Math.min(headPosition, after + limit) - after);
  const missing = firstMissing(rows, after);
  if (rows.length >= expected && missing > after + rows.length) return;
  throw new DomainError(
    'ErrChainBroken',
    `tenant ${JSON.stringify(tenant)} is missing rows in its store: position ${missing} is not there, though its commands recorded the log up to ${headPosition} — events were removed; see colony verify`,
    { tenant, position: missing },
  );
}

/** The first position after `after` that a page of consecutive rows lacks. */
function firstMissing(rows: readonly EventRow[], after: number): number {
  let expected = after + 1;
  for (const row of rows) {
    if (row.position !== expected) return expected;
    expected++;
  }
  return expected;
}

/** The head every append moved (`es_chains`): position 0 and the genesis hash for a tenant with no events. */
export async function recordedHead(client: pg.ClientBase | pg.Pool, tenant: string): Promise<ChainHead> {
  const result = await client.query<{ position: string; hash: string }>(
    'SELECT position, hash FROM es_chains WHERE tenant = $1',
    [tenant],
  );
  const row = result.rows[0];
  return row ? { position: int(row.position), hash: row.hash } : { position: 0, hash: GENESIS_HASH };
}

export function eventRow(row: PgEventRow): EventRow {
  return {
    position: int(row.position),
    stream_id: row.stream_id,
    version: row.version,
    type: row.type,
    schema_version: row.schema_version,
    data: row.data,
    meta: row.meta,
    recorded_at: row.recorded_at,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

export const storedEvent = (row: PgEventRow): StoredEvent => toStoredEvent(eventRow(row));

export function tenantEvent(row: PgEventRow): TenantEvent {
  return { ...storedEvent(row), tenant: row.tenant, cursor: { txid: row.txid, seq: int(row.global_seq) } };
}

/**
 * Inserts rows of one tenant in one statement (arrays unnested) and returns each row's global order.
 * The chain head moves and the command is recorded in the same statement: one round trip per append.
 */
/**
 * The insert of a tenant's rows as one statement's first CTE: $1 the tenant, $2…$11 the columns
 * (`eventColumns`). RETURNING what readers order by.
 */
export const INSERT_EVENTS = `
       INSERT INTO es_events (tenant, position, stream_id, version, type, schema_version, data, meta, recorded_at, prev_hash, hash)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::int[], $5::text[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
       RETURNING position, global_seq, transaction_id`;

/** The rows as the ten column arrays of INSERT_EVENTS ($2…$11). */
export const eventColumns = (rows: readonly EventRow[]): unknown[][] => [
  rows.map((r) => r.position),
  rows.map((r) => r.stream_id),
  rows.map((r) => r.version),
  rows.map((r) => r.type),
  rows.map((r) => r.schema_version),
  rows.map((r) => r.data),
  rows.map((r) => r.meta),
  rows.map((r) => r.recorded_at),
  rows.map((r) => r.prev_hash),
  rows.map((r) => r.hash),
];

export async function insertRows(
  client: pg.ClientBase,
  tenant: string,
  rows: readonly EventRow[],
  command: { id: string; at: string } | null,
): Promise<Map<number, { txid: string; seq: number }>> {
  const last = rows[rows.length - 1]!;
  const result = await client.query<{ position: string; global_seq: string; txid: string }>({
    name: 'colony_insert_rows',
    text: `WITH ins AS (${INSERT_EVENTS}), head AS (
       UPDATE es_chains SET position = $12, hash = $13 WHERE tenant = $1
     ), cmd AS (
       INSERT INTO es_commands (tenant, command_id, first_position, last_position, committed_at)
       SELECT $1, $14::text, $15::bigint, $12, $16 WHERE $14::text IS NOT NULL
     )
     SELECT position, global_seq, transaction_id::text AS txid, pg_notify('colony_events', $1) FROM ins`,
    values: [
      tenant,
      ...eventColumns(rows),
      last.position,
      last.hash,
      command?.id ?? null,
      rows[0]!.position,
      command?.at ?? '',
    ],
  });
  return new Map(result.rows.map((r) => [int(r.position), { txid: r.txid, seq: int(r.global_seq) }]));
}

/** A tenant's stream, in version order (all of it, or the slice `options` names). */
export async function readStreamOf(
  client: pg.ClientBase | pg.Pool,
  tenant: string,
  streamId: string,
  options: ReadStreamOptions = {},
): Promise<StoredEvent[]> {
  const result = await client.query<PgEventRow>(
    `SELECT ${PG_EVENT_COLUMNS} FROM es_events WHERE tenant = $1 AND stream_id = $2 AND version BETWEEN $3 AND $4 ORDER BY version LIMIT $5`,
    [tenant, streamId, options.from ?? 1, options.to ?? 2 ** 31 - 1, options.max ?? null],
  );
  return result.rows.map(storedEvent);
}
