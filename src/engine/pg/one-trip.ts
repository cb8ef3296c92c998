import type pg from 'pg';
import { DomainError } from '../../errors.js';
import { log } from '../../log.js';
import { sqlOf } from '../projection-sql.js';
import type { PrimaryWrite } from '../replica.js';
import { WRITE_CONFLICT, type Expectation, type RecordedWrite } from '../replica-record.js';
import { GENESIS_HASH } from '../hash.js';
import { toStoredEvent } from '../store.js';
import { commitRowsStatement } from './commit-rows.js';
import { toPostgres } from './dialect.js';
import { inline, literal } from './inline.js';
import { stepValues } from './projection-driver.js';
import type { PgReadModels } from './projections.js';

/**
 * A node's write (engine/replica.ts) sent as one simple-query string, so the tenant's lock is held for
 * the time PostgreSQL takes to run it rather than across round trips:
 *
 *   [BEGIN; SET LOCAL …; SELECT colony_expect(…);]  the rows (pg/commit-rows.ts);  SAVEPOINT;
 *   each recorded read-model write, checked to change as many rows as on the copy;  COMMIT
 *
 * The first part only for an optimistic write: colony_expect (pg/schema.ts) takes the lock and checks that
 * the store is as the node decided against; every statement after it takes a new snapshot (READ
 * COMMITTED), so it sees all that committed before the lock was ours. Any error stops the string there.
 * A conflict (CL001) rolls back and answers ErrWriteConflict. An error in the read models (a row count
 * that differs, CL002, or any other) rolls back to the savepoint — keeping the lock and the rows — and
 * runs the projections on PostgreSQL as a write did before (one round trip per step), then commits.
 */
export interface OneTrip {
  client: pg.ClientBase;
  tenant: string;
  readModels: PgReadModels;
  write: PrimaryWrite;
}

/** The statements before the rows of an optimistic write: the transaction, its limits, the lock and the checks. */
export function expectSql(
  begin: string,
  tenant: string,
  key: bigint,
  expect: Expectation,
  epoch: number | null,
): string {
  const { head } = expect;
  const args = [
    tenant,
    key,
    head.position,
    head.position === 0 ? GENESIS_HASH : head.hash,
    epoch,
    expect.prefixes,
    expect.known,
    JSON.stringify(Object.fromEntries(expect.marks)),
  ];
  return `${begin}; SELECT colony_expect(${args.map(literal).join(', ')})`;
}

/** True when the recorded read-model writes stood; false when the projections ran on PostgreSQL instead. */
export async function sendOneTrip(trip: OneTrip, before: string | null): Promise<boolean> {
  const { client, tenant, readModels, write } = trip;
  const rm = readModels.projections.length > 0;
  const guarded = rm ? guard(write.writes) : [];
  const parts = before ? [before] : [];
  if (write.rows.length || write.empty.length || write.sequences.length) {
    const rows = commitRowsStatement(tenant, write);
    parts.push(inline(rows.text, rows.values));
  }
  parts.push('SAVEPOINT colony_rm', ...(guarded ?? []));
  if (guarded) parts.push('COMMIT');
  try {
    await client.query(parts.join(';\n'));
  } catch (e) {
    if ((e as { code?: string }).code === 'CL001') {
      await client.query('ROLLBACK');
      throw new DomainError(WRITE_CONFLICT, 'another node wrote to the tenant while this one decided: decide again');
    }
    if (
      !(await client.query('ROLLBACK TO SAVEPOINT colony_rm').then(
        () => true,
        () => false,
      ))
    ) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
    warnOnce(e);
    await runProjections(trip);
    return false;
  }
  if (!guarded) await runProjections(trip);
  return guarded !== null;
}

/** The projections run on PostgreSQL (the lock and the rows kept), then COMMIT. */
async function runProjections({ client, readModels, write }: OneTrip): Promise<void> {
  try {
    await readModels.apply(
      client,
      write.rows.map((r) => toStoredEvent(r)),
    );
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

/**
 * Each recorded write as one statement that fails (CL002) unless it changed the rows it changed on the
 * copy; null when one cannot be checked so (not a plain INSERT, UPDATE or DELETE): the projections run.
 */
function guard(writes: readonly RecordedWrite[]): string[] | null {
  const out: string[] = [];
  for (const w of writes) {
    const statement = toPostgres(sqlOf(w.sql, 'postgres'));
    const text = statement.text.trim().replace(/;$/, '');
    if (!/^(INSERT|UPDATE|DELETE)\b/i.test(text) || /\bRETURNING\b/i.test(text)) return null;
    const values = stepValues({ op: 'run', sql: w.sql, params: w.params }, statement.names);
    const write = inline(text, values);
    out.push(`WITH w AS (${write} RETURNING 1) SELECT colony_expect_count((SELECT count(*) FROM w), ${w.changes})`);
  }
  return out;
}

let warned = false;
function warnOnce(e: unknown): void {
  if (warned) return;
  warned = true;
  log.warn(
    { err: e },
    "a node's recorded read-model writes did not apply on PostgreSQL as on its copy: its projections ran there instead (logged once)",
  );
}
