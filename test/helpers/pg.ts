import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * PostgreSQL for tests. `COLONY_TEST_PG` names the server (`.ci/run` sets it and fails when the server
 * is unreachable); without it the PostgreSQL half of a test is reported as skipped, with the reason —
 * never passed silently. Each test gets a schema of its own (`?schema=`), dropped when it ends.
 */
export const PG_URL = process.env.COLONY_TEST_PG;

/** For node:test's `skip` option: false when PostgreSQL is there, the reason otherwise. */
export const pgSkip: string | false = PG_URL ? false : 'COLONY_TEST_PG is not set (.ci/run sets it)';

export interface PgScratch {
  /** A store URL with a fresh schema. */
  url: string;
  schema: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

export function pgScratch(): PgScratch {
  if (!PG_URL) throw new Error('COLONY_TEST_PG is not set');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  return {
    url: url.href,
    schema,
    async drop() {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** One raw connection to the scratch schema, for what a test must do behind the store's back. */
export async function pgRaw(scratch: PgScratch): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${scratch.schema}` });
  await client.connect();
  return client;
}
