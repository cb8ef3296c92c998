import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { LOG_START, type EventStore, type LogCursor, type TenantEvent } from '../../src/engine/store-port.js';
import { dropStoreSchemas } from '../../testkit/pg-schemas.js';

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
    drop: () => dropStoreSchemas(PG_URL, schema),
  };
}

/** One raw connection to the scratch schema, for what a test must do behind the store's back. */
export async function pgRaw(scratch: PgScratch): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${scratch.schema}` });
  await client.connect();
  return client;
}

/**
 * Every event after `after` in the global order, read in pages of `limit`, once there are `want` of them.
 * On PostgreSQL a reader sees nothing at or past the oldest transaction still running in the whole
 * cluster — another test file's open transaction too — so a read right after a commit may come back
 * short; it is read again until the events are there (or 10 s pass: then what was read is returned, and
 * the caller's assertion says what is missing).
 */
export async function readAllOf(
  store: EventStore,
  want: number,
  after: LogCursor = LOG_START,
  limit = 1000,
): Promise<TenantEvent[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const all: TenantEvent[] = [];
    for (let cursor = after; ;) {
      const page = await store.readAll(cursor, limit);
      all.push(...page.events);
      if (page.events.length < limit) break;
      cursor = page.cursor;
    }
    if (all.length >= want || Date.now() > deadline) return all;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
