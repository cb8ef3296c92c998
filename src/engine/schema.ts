import type { Migration } from './db.js';
import { GENESIS_HASH } from './hash.js';

/**
 * The engine's own tables, migrated by `PRAGMA user_version`. Projections own their read tables and
 * are versioned separately (`es_projections`), so changing one never needs a migration here.
 *
 * - `es_events`: the log. Append-only: triggers reject UPDATE and DELETE (an attacker can drop them;
 *   the hash chain is what catches that).
 * - `es_commands`: every committed command whose id the caller supplied (an idempotency key), with the
 *   positions of its events (NULL for a command that decided nothing), so a retry — even of a no-op —
 *   returns the first result. A generated id cannot be retried by anyone, so it is not recorded: that
 *   saves a page write per command. Append-only as well; WITHOUT ROWID keeps it one B-tree.
 * - `es_projections`: each projection's code version and the position it has applied; `stale` marks one
 *   that missed events (appended by a process that did not have it) and must be rebuilt. Its row `$log`
 *   is the log's own: advanced by every command in the same statement as the projections (same page),
 *   it anchors the log's end — position and, since version 2, hash — which is how `verify` catches a
 *   deleted tail or rows slipped in behind the engine's back, and how every command refuses to continue
 *   a chain whose tail is not the one the last command left (engine/anchor.ts).
 * - `es_sequences`: high-water marks of integer ids per kind.
 * - `es_merkle`, `es_checkpoints` (3) and `es_snapshots` (4): see their migrations.
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
        CREATE TRIGGER es_events_no_update BEFORE UPDATE ON es_events
          BEGIN SELECT RAISE(ABORT, 'es_events is append-only: UPDATE is not allowed'); END;
        CREATE TRIGGER es_events_no_delete BEFORE DELETE ON es_events
          BEGIN SELECT RAISE(ABORT, 'es_events is append-only: DELETE is not allowed'); END;

        CREATE TABLE es_commands (
          command_id     TEXT PRIMARY KEY,
          first_position INTEGER,
          last_position  INTEGER,
          committed_at   TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TRIGGER es_commands_no_update BEFORE UPDATE ON es_commands
          BEGIN SELECT RAISE(ABORT, 'es_commands is append-only: UPDATE is not allowed'); END;
        CREATE TRIGGER es_commands_no_delete BEFORE DELETE ON es_commands
          BEGIN SELECT RAISE(ABORT, 'es_commands is append-only: DELETE is not allowed'); END;

        CREATE TABLE es_projections (
          name       TEXT PRIMARY KEY,
          version    INTEGER NOT NULL,
          position   INTEGER NOT NULL,
          stale      INTEGER NOT NULL DEFAULT 0,
          rebuilt_at TEXT
        );
        INSERT INTO es_projections (name, version, position) VALUES ('$log', 1, 0);

        CREATE TABLE es_sequences (
          name  TEXT PRIMARY KEY,
          value INTEGER NOT NULL
        );
      `);
    },
  },
  {
    // The log end's hash beside its position: a position alone cannot tell the real last row from one
    // rewritten or cut and re-grown to the same length. Initialized from the row the position names; a
    // log that lacks that row (already tampered with) keeps NULL, which no tail matches.
    version: 2,
    up(db) {
      db.exec(`
        ALTER TABLE es_projections ADD COLUMN hash TEXT;
        UPDATE es_projections
          SET hash = CASE WHEN position = 0 THEN '${GENESIS_HASH}' ELSE (SELECT e.hash FROM es_events e WHERE e.position = es_projections.position) END
          WHERE name = '$log';
      `);
    },
  },
  {
    // Evidence for auditors. `es_merkle` caches the log's Merkle tree: every complete, aligned
    // subtree of 16 leaves or more (level ≥ 4), so a root or a proof at any tree size costs O(log n) lookups
    // plus at most a few small leaf reads. It is derived from es_events and filled lazily (checkpoints,
    // exports), never on the append path; it can be dropped and rebuilt at any time. `es_checkpoints` keeps
    // every signed checkpoint, append-only like the log.
    version: 3,
    up(db) {
      db.exec(`
        CREATE TABLE es_merkle (
          level INTEGER NOT NULL,
          idx   INTEGER NOT NULL,
          hash  BLOB    NOT NULL,
          PRIMARY KEY (level, idx)
        ) WITHOUT ROWID;

        CREATE TABLE es_checkpoints (
          n          INTEGER PRIMARY KEY,
          tree_size  INTEGER NOT NULL,
          key_id     TEXT    NOT NULL,
          body       TEXT    NOT NULL,
          signature  TEXT    NOT NULL,
          public_key TEXT    NOT NULL,
          reason     TEXT    NOT NULL
        );
        CREATE INDEX es_checkpoints_by_size ON es_checkpoints (tree_size);
        CREATE TRIGGER es_checkpoints_no_update BEFORE UPDATE ON es_checkpoints
          BEGIN SELECT RAISE(ABORT, 'es_checkpoints is append-only: UPDATE is not allowed'); END;
        CREATE TRIGGER es_checkpoints_no_delete BEFORE DELETE ON es_checkpoints
          BEGIN SELECT RAISE(ABORT, 'es_checkpoints is append-only: DELETE is not allowed'); END;
      `);
    },
  },
  {
    // Stream snapshots: a decider's state folded up to (version, hash) of one stream, so a
    // cold load of a long stream folds only the events after it (engine/snapshots.ts). A cache derived
    // from es_events, trusted only while the log still holds that hash at that version; dropping it loses
    // nothing. `decider` names the decider and the version of its state's shape.
    version: 4,
    up(db) {
      db.exec(`
        CREATE TABLE es_snapshots (
          stream_id TEXT    NOT NULL,
          decider   TEXT    NOT NULL,
          version   INTEGER NOT NULL,
          hash      TEXT    NOT NULL,
          state     BLOB    NOT NULL,
          PRIMARY KEY (stream_id, decider)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    // The projections that applied every event up to the `$log` row's position, so a command moves that
    // one row instead of every projection's (engine/projection-positions.ts). Empty: every row is exact.
    version: 5,
    up(db) {
      db.exec(`ALTER TABLE es_projections ADD COLUMN followers TEXT NOT NULL DEFAULT ''`);
    },
  },
];
