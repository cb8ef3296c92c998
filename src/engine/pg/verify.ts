import type pg from 'pg';
import { GENESIS_HASH } from '../hash.js';
import { checkChainRow, endProblem, type VerifyResult } from '../verify.js';
import { inTransaction } from './connect.js';
import { readTenantRows, recordedHead } from './rows.js';

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
        const page = await readTenantRows(client, tenant, head.position, PAGE);
        for (const row of page) {
          const failure = checkChainRow(row, head.position + 1, head.hash, versions, () => 0);
          if (failure) return { ok: false, events: head.position, ...failure };
          head = { position: row.position, hash: row.hash };
        }
        if (page.length < PAGE) break;
      }
      // The same end checks as SQLite's walk, against the head the appends recorded.
      const end = endProblem(head, await recordedHead(client, tenant), undefined, true);
      return end ? { ok: false, events: head.position, ...end } : { ok: true, events: head.position, head };
    },
    'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
  );
}
