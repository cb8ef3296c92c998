import pg from 'pg';

/**
 * Drops a PostgreSQL store's schema and every tenant's read-model schema beside it
 * (`<schema cut to 40>_rm_<hash>`, src/engine/pg/projections.ts readSchema): what a test or a benchmark
 * that made a scratch store leaves behind. `url` is a plain connection string (no `schema`/`tenant` query).
 */
export async function dropStoreSchemas(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query<{ nspname: string }>(
      `SELECT nspname FROM pg_namespace WHERE nspname = $1 OR nspname LIKE $2`,
      [schema, `${schema.slice(0, 40)}\\_rm\\_%`],
    );
    for (const { nspname } of found.rows) await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  } finally {
    await client.end();
  }
}
