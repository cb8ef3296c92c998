import type { Migration } from '../db.js';
import { GENESIS_HASH } from './hash.js';

/**
 * The engine's own tables, migrated by `PRAGMA user_version`. Projections own their read tables and
 * are versioned separately (`es_projections`), so changing one never needs a migration here.
 *
 * - `es_events`: the log. Append-only: triggers reject UPDATE and DELETE (an attacker can drop them;
 *   the hash chain is what catches that).
 * - `es_head`: the chain head (last position and hash), updated in every append transaction. It is how
 *   a deleted tail is detected: the chain alone cannot tell a truncated log from a short one.
 * - `es_projections`: each projection's code version and the position it has applied.
 * - `es_sequences`: high-water marks of integer ids per kind.
 */
export const engineMigrations: readonly Migration[] = [
  {
    version: 1,
    up(db) {
      db.exec(`
        CREATE TABLE es_events (
          position       INTEGER PRIMARY KEY,
          stream_id      TEXT    NOT NULL,
          version        INTEGER NOT NULL CHECK (version >= 1),
          type           TEXT    NOT NULL,
          schema_version INTEGER NOT NULL CHECK (schema_version >= 1),
          data           TEXT    NOT NULL,
          meta           TEXT    NOT NULL,
          recorded_at    TEXT    NOT NULL,
          prev_hash      TEXT    NOT NULL,
          hash           TEXT    NOT NULL,
          UNIQUE (stream_id, version)
        );
        CREATE INDEX es_events_by_command ON es_events (json_extract(meta, '$.commandId'));
        CREATE TRIGGER es_events_no_update BEFORE UPDATE ON es_events
          BEGIN SELECT RAISE(ABORT, 'es_events is append-only: UPDATE is not allowed'); END;
        CREATE TRIGGER es_events_no_delete BEFORE DELETE ON es_events
          BEGIN SELECT RAISE(ABORT, 'es_events is append-only: DELETE is not allowed'); END;

        CREATE TABLE es_head (
          id       INTEGER PRIMARY KEY CHECK (id = 1),
          position INTEGER NOT NULL,
          hash     TEXT    NOT NULL
        );
        INSERT INTO es_head (id, position, hash) VALUES (1, 0, '${GENESIS_HASH}');

        CREATE TABLE es_projections (
          name       TEXT PRIMARY KEY,
          version    INTEGER NOT NULL,
          position   INTEGER NOT NULL,
          rebuilt_at TEXT
        );

        CREATE TABLE es_sequences (
          name  TEXT PRIMARY KEY,
          value INTEGER NOT NULL
        );
      `);
    },
  },
];
