import pg from 'pg';
import type { PgTarget } from './target.js';

/** Connections to a PostgreSQL store (target.ts says where it is). */

export function openPool(target: PgTarget, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: target.connectionString, max, options: searchPath(target) });
  // An idle client that loses its server (a restart, a failover) is dropped from the pool, not fatal.
  pool.on('error', () => undefined);
  return pool;
}

/** One dedicated connection (LISTEN and advisory locks live and die with their session). */
export async function openClient(target: PgTarget): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: target.connectionString, options: searchPath(target) });
  await client.connect();
  return client;
}

const searchPath = (target: PgTarget): string => `-c search_path=${target.schema}`;

/** Runs `body` in one transaction on a pooled client: COMMIT when it returns, ROLLBACK when it throws. */
export async function inTransaction<T>(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const value = await body(client);
    await client.query('COMMIT');
    return value;
  } catch (e) {
    try {
      await client.query('ROLLBACK');
    } catch (rollback) {
      broken = rollback as Error; // the connection is gone: never hand it out again
    }
    throw e;
  } finally {
    client.release(broken);
  }
}

/** int8 arrives as text (it may exceed 2^53); positions and sequence numbers stay far below. */
export const int = (value: string | number): number => Number(value);
