import type pg from 'pg';
import { inTransaction } from './connect.js';

/**
 * The engine's tables on PostgreSQL, in the store's schema. The SQLite log's columns, plus:
 * - `tenant`: each team's partition. Its chain, positions (gap-free, 1, 2, 3… as on SQLite, so a migrated
 *   log keeps every hash), stream ids and command ids are its own.
 * - `global_seq` and `transaction_id` (the inserting transaction's xid8): the global order readers follow.
 *   A sequence value is taken at insert but becomes visible at commit, so `global_seq` alone can skip a
 *   late commit; readers order by (transaction_id, global_seq) and read only below the oldest running
 *   transaction (pg/store.ts readAll) — Emmett's technique.
 * - `es_chains`: each tenant's chain head. An append holds the tenant's advisory lock (pg/store.ts lockChain), which serializes one
 *   tenant's appends while other tenants commit in parallel; it is also the log end every append records,
 *   which is how `verify` catches a deleted tail.
 * `data` and `meta` stay text: they are canonical JSON whose exact bytes the hashes cover (jsonb would
 * reorder keys). Triggers make the log and the command record append-only.
 * `es_sequences`: each tenant's integer id high-water marks per kind (pg/sequences.ts).
 * Read models live in a schema per tenant, with their versions in its `rm_projections` (pg/projections.ts).
 * `colony_expect` and `colony_expect_count` (version 3): the checks of a node's write sent in one round
 * trip (pg/one-trip.ts) — they raise SQLSTATE CL001 (the chain moved: decide again) and CL002 (a recorded
 * read-model write changed other rows here than on the node's copy).
 * Nodes that start together migrate one at a time (a transaction-scoped advisory lock).
 */
const VERSION = 3;
const MIGRATION_LOCK = 0x636f6c6f6e79; // 'colony'

const DDL = `
  CREATE TABLE IF NOT EXISTS es_schema (version integer NOT NULL);
  CREATE SEQUENCE IF NOT EXISTS es_global_seq;
  CREATE TABLE IF NOT EXISTS es_events (
    tenant         text    NOT NULL,
    position       bigint  NOT NULL CHECK (position >= 1),
    global_seq     bigint  NOT NULL DEFAULT nextval('es_global_seq'),
    transaction_id xid8    NOT NULL DEFAULT pg_current_xact_id(),
    stream_id      text    NOT NULL,
    version        integer NOT NULL CHECK (version >= 1),
    type           text    NOT NULL,
    schema_version integer NOT NULL CHECK (schema_version >= 1),
    data           text    NOT NULL,
    meta           text    NOT NULL,
    recorded_at    text    NOT NULL,
    prev_hash      text    NOT NULL,
    hash           text    NOT NULL,
    PRIMARY KEY (tenant, position),
    UNIQUE (tenant, stream_id, version)
  );
  CREATE INDEX IF NOT EXISTS es_events_global_order ON es_events (transaction_id, global_seq);
  CREATE TABLE IF NOT EXISTS es_chains (
    tenant   text   PRIMARY KEY,
    position bigint NOT NULL,
    hash     text   NOT NULL
  );
  CREATE TABLE IF NOT EXISTS es_commands (
    tenant         text   NOT NULL,
    command_id     text   NOT NULL,
    first_position bigint,
    last_position  bigint,
    committed_at   text   NOT NULL,
    PRIMARY KEY (tenant, command_id)
  );
  CREATE TABLE IF NOT EXISTS es_sequences (
    tenant text   NOT NULL,
    name   text   NOT NULL,
    value  bigint NOT NULL,
    PRIMARY KEY (tenant, name)
  );
  -- Signed checkpoints of each tenant's log (version 2), as es_checkpoints in a SQLite file.
  CREATE TABLE IF NOT EXISTS es_checkpoints (
    tenant     text   NOT NULL,
    n          bigint NOT NULL,
    tree_size  bigint NOT NULL,
    key_id     text   NOT NULL,
    body       text   NOT NULL,
    signature  text   NOT NULL,
    public_key text   NOT NULL,
    reason     text   NOT NULL,
    PRIMARY KEY (tenant, n)
  );
  CREATE OR REPLACE FUNCTION colony_expect(p_tenant text, p_key bigint, p_position bigint, p_hash text,
      p_epoch integer, p_prefixes text[], p_known text[], p_marks jsonb) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE head_position bigint; head_hash text; stored_epoch integer;
    BEGIN
      -- Each statement below takes a new snapshot, so it sees every write committed before the lock was ours.
      PERFORM pg_advisory_xact_lock(p_key);
      SELECT position, hash INTO head_position, head_hash FROM es_chains WHERE tenant = p_tenant;
      IF NOT FOUND AND p_position = 0 THEN
        INSERT INTO es_chains (tenant, position, hash) VALUES (p_tenant, 0, p_hash);
        head_position := 0; head_hash := p_hash;
      END IF;
      -- The copy's head must also be the log's row there (a row changed under it: pg/locked-state.ts says which).
      IF head_position IS DISTINCT FROM p_position OR head_hash IS DISTINCT FROM p_hash OR (p_position > 0 AND
          (SELECT hash FROM es_events WHERE tenant = p_tenant AND position = p_position) IS DISTINCT FROM p_hash) THEN
        RAISE EXCEPTION 'the chain moved since the node decided' USING ERRCODE = 'CL001';
      END IF;
      IF p_epoch IS NOT NULL THEN
        SELECT epoch INTO stored_epoch FROM rm_tenant;
        IF stored_epoch IS DISTINCT FROM p_epoch THEN
          RAISE EXCEPTION 'the read models were rebuilt since the node decided' USING ERRCODE = 'CL001';
        END IF;
      END IF;
      IF EXISTS (SELECT 1 FROM es_commands c JOIN unnest(p_prefixes) AS p(prefix)
                   ON c.command_id >= p.prefix AND c.command_id < p.prefix || '~'
                  WHERE c.tenant = p_tenant AND c.command_id <> ALL (p_known)) THEN
        RAISE EXCEPTION 'another node recorded a command under a key the node checked' USING ERRCODE = 'CL001';
      END IF;
      IF EXISTS (SELECT 1 FROM es_sequences s
                  WHERE s.tenant = p_tenant AND s.value > COALESCE((p_marks ->> s.name)::bigint, 0)) THEN
        RAISE EXCEPTION 'another node took ids the node did not see' USING ERRCODE = 'CL001';
      END IF;
    END $$;
  CREATE OR REPLACE FUNCTION colony_expect_count(p_changed bigint, p_expected bigint) RETURNS void
      LANGUAGE plpgsql AS $$
    BEGIN
      IF p_changed <> p_expected THEN
        RAISE EXCEPTION 'a read-model write changed % rows here and % on the node''s copy', p_changed, p_expected
          USING ERRCODE = 'CL002';
      END IF;
    END $$;
  CREATE OR REPLACE FUNCTION es_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP; END $$;
  CREATE OR REPLACE TRIGGER es_events_append_only BEFORE UPDATE OR DELETE ON es_events
    FOR EACH ROW EXECUTE FUNCTION es_append_only();
  CREATE OR REPLACE TRIGGER es_events_no_truncate BEFORE TRUNCATE ON es_events
    FOR EACH STATEMENT EXECUTE FUNCTION es_append_only();
  CREATE OR REPLACE TRIGGER es_commands_append_only BEFORE UPDATE OR DELETE ON es_commands
    FOR EACH ROW EXECUTE FUNCTION es_append_only();
  CREATE OR REPLACE TRIGGER es_checkpoints_append_only BEFORE UPDATE OR DELETE ON es_checkpoints
    FOR EACH ROW EXECUTE FUNCTION es_append_only();
`;

export async function migratePg(pool: pg.Pool, schema: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`SET LOCAL search_path TO ${schema}`);
    const exists = await client.query<{ found: boolean }>(`SELECT to_regclass('es_schema') IS NOT NULL AS found`);
    const found = exists.rows[0]!.found
      ? await client.query<{ version: number }>('SELECT version FROM es_schema')
      : { rows: [] };
    const version = found.rows[0]?.version ?? 0;
    if (version > VERSION)
      throw new Error(`the store's schema is version ${version}, newer than this Colony's ${VERSION}: upgrade Colony`);
    if (version === VERSION) return;
    await client.query(DDL);
    await client.query('DELETE FROM es_schema');
    await client.query('INSERT INTO es_schema (version) VALUES ($1)', [VERSION]);
  });
}
