import type pg from 'pg';
import { DomainError } from '../../errors.js';
import { importedRowProblem } from '../command-log.js';
import type { EventRow } from '../event.js';
import type { ChainHead } from '../store.js';
import { toStoredEvent } from '../store.js';
import type { TenantEvent } from '../store-port.js';
import { insertRows } from './rows.js';
import { raiseSequences, streamMarks } from './sequences.js';

const BATCH = 1000;

/**
 * Appends rows exactly as given to a tenant whose chain head the caller has locked: each must continue
 * the chain (the same checks as SQLite's import, engine/command-log.ts). Every command the rows carry is
 * recorded, so a retry of one after a migration is still answered with its first result.
 */
export async function importPgRows(
  client: pg.ClientBase,
  tenant: string,
  start: ChainHead,
  rows: readonly EventRow[],
  at: string,
): Promise<TenantEvent[]> {
  const versions = await streamVersions(client, tenant, [...new Set(rows.map((r) => r.stream_id))]);
  let head = start;
  for (const row of rows) {
    const problem = importedRowProblem(row, head, versions.get(row.stream_id) ?? 0);
    if (problem) throw new DomainError('ErrChainMismatch', problem, { tenant, position: row.position });
    versions.set(row.stream_id, row.version);
    head = { position: row.position, hash: row.hash };
  }
  const events: TenantEvent[] = [];
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH);
    const order = await insertRows(client, tenant, batch, null);
    for (const row of batch) events.push({ ...toStoredEvent(row), tenant, cursor: order.get(row.position)! });
  }
  await recordCommands(client, tenant, events, at);
  await raiseSequences(client, tenant, streamMarks(rows.map((r) => r.stream_id)));
  return events;
}

async function streamVersions(client: pg.ClientBase, tenant: string, streams: string[]): Promise<Map<string, number>> {
  const result = await client.query<{ stream_id: string; v: number }>({
    name: 'colony_stream_versions',
    text: 'SELECT stream_id, MAX(version) AS v FROM es_events WHERE tenant = $1 AND stream_id = ANY($2) GROUP BY stream_id',
    values: [tenant, streams],
  });
  return new Map(result.rows.map((r) => [r.stream_id, r.v]));
}

async function recordCommands(client: pg.ClientBase, tenant: string, events: TenantEvent[], at: string) {
  const spans = new Map<string, { first: number; last: number }>();
  for (const e of events) {
    const span = spans.get(e.meta.commandId);
    if (span) span.last = e.position;
    else spans.set(e.meta.commandId, { first: e.position, last: e.position });
  }
  const ids = [...spans.keys()];
  const result = await client.query({
    name: 'colony_record_commands',
    text: `INSERT INTO es_commands (tenant, command_id, first_position, last_position, committed_at)
     SELECT $1, c.id, c.first, c.last, $5::text FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS c (id, first, last)
     ON CONFLICT DO NOTHING`,
    values: [tenant, ids, ids.map((id) => spans.get(id)!.first), ids.map((id) => spans.get(id)!.last), at],
  });
  if (result.rowCount !== ids.length)
    throw new DomainError('ErrChainMismatch', `a command of these rows is already in tenant ${tenant}'s log`, {
      tenant,
    });
}
