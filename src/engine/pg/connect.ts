import pg from 'pg';
import { invalidInput } from '../../errors.js';

/**
 * Connections to a PostgreSQL store. A store URL is a libpq URL (`postgres://user@host:port/db`) with one
 * addition, `?schema=<name>` (default `colony`): the schema that holds Colony's tables, so several
 * Colonies — or test runs — can share a database. Every connection sets its search_path to it.
 */
export interface PgTarget {
  /** The URL without Colony's own parameters, as node-postgres takes it. */
  connectionString: string;
  schema: string;
  /** The URL with any password hidden, for messages. */
  display: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function pgTarget(url: string): PgTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidInput(`store URL is not a URL: ${JSON.stringify(url)} (expected postgres://user@host:port/database)`);
  }
  if (!/^postgres(ql)?:$/.test(parsed.protocol))
    throw invalidInput(`store URL must start with postgres:// (got ${parsed.protocol}//)`);
  const schema = parsed.searchParams.get('schema') ?? 'colony';
  if (!SCHEMA_NAME.test(schema))
    throw invalidInput(`schema ${JSON.stringify(schema)} is not a plain lowercase SQL name (a-z, 0-9, _)`);
  const display = new URL(parsed.href);
  if (display.password) display.password = '***';
  parsed.searchParams.delete('schema');
  // The tenant a node's domain commands work on (cli/shared.ts) is Colony's too, not libpq's.
  parsed.searchParams.delete('tenant');
  return { connectionString: parsed.href, schema, display: display.href };
}

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
