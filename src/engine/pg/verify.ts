import type pg from 'pg';
import type { EventRow } from '../event.js';
import { GENESIS_HASH } from '../hash.js';
import { checkChainRow, type VerifyResult } from '../verify.js';
import { inTransaction, int } from './connect.js';
import { eventRow, PG_EVENT_COLUMNS, type PgEventRow } from './rows.js';

const PAGE = 10_000;

/**
 * Walks one tenant's chain in position order with the SQLite walk's row checks (engine/verify.ts), then
 * checks its end against the head every append moved in the same statement (`es_chains`): that is what
 * catches a deleted tail or rows slipped in behind the engine. One REPEATABLE READ transaction, so
 * appends during a long walk are not seen half-way.
 */
export async function verifyPgTenant(pool: pg.Pool, tenant: string): Promise<VerifyResult> {
  return inTransaction(
    pool,
    async (client) => {
      const versions = new Map<string, number>();
      let head = { position: 0, hash: GENESIS_HASH };
      for (;;) {
        const page = await client.query<PgEventRow>(
          `SELECT ${PG_EVENT_COLUMNS} FROM es_events WHERE tenant = $1 AND position > $2 ORDER BY position LIMIT $3`,
          [tenant, head.position, PAGE],
        );
        for (const row of page.rows.map(eventRow)) {
          const failure = checkChainRow(row, head.position + 1, head.hash, versions, () => 0);
          if (failure) return { ok: false, events: head.position, ...failure };
          head = { position: row.position, hash: row.hash };
        }
        if (page.rows.length < PAGE) break;
      }
      return endOfChain(await recordedEnd(client, tenant), head);
    },
    'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
  );
}

async function recordedEnd(client: pg.ClientBase, tenant: string) {
  const result = await client.query<{ position: string; hash: string }>(
    'SELECT position, hash FROM es_chains WHERE tenant = $1',
    [tenant],
  );
  const row = result.rows[0];
  return row ? { position: int(row.position), hash: row.hash } : { position: 0, hash: GENESIS_HASH };
}

function endOfChain(
  recorded: { position: number; hash: string },
  head: Pick<EventRow, 'position' | 'hash'>,
): VerifyResult {
  const events = head.position;
  const mismatch = (position: number, message: string): VerifyResult => ({
    ok: false,
    events,
    position,
    reason: 'head_mismatch',
    message,
  });
  if (recorded.position > head.position)
    return mismatch(
      head.position + 1,
      `the chain ends at position ${head.position} but appends recorded it up to ${recorded.position}: events were removed`,
    );
  if (recorded.position < head.position)
    return mismatch(
      recorded.position + 1,
      `positions ${recorded.position + 1}–${head.position} were not appended by Colony`,
    );
  if (recorded.hash !== head.hash)
    return mismatch(
      head.position,
      `the last row (position ${head.position}) is not the one the last append wrote: its hash changed`,
    );
  return { ok: true, events, head };
}
