import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import type { ChainHead } from './store.js';
import type { DialectSql, SqlParams, SqlStep } from './projection-sql.js';

/**
 * What a node's write transaction records for its primary (engine/replica.ts) so that the primary's
 * commit is one round trip.
 *
 * The read models: the copy applies the same projections to its own tables in the same transaction, and
 * the primary's read models equal the copy's row for row (test/engine/pg/read-models.test.ts), so the
 * branches a projection took on the copy's answers are the ones it would take on the primary's. Each of
 * its writes is recorded with the rows it changed here; the primary repeats the writes and checks each
 * changes as many rows (pg/one-trip.ts), and runs the projections itself where one does not.
 */
export interface RecordedWrite {
  /** The event the write was for: a write of an event rolled back (a refused command's savepoint) is dropped. */
  position: number;
  sql: DialectSql;
  params: SqlParams;
  changes: number;
}

export class WriteRecorder {
  private readonly writes: RecordedWrite[] = [];
  private position = 0;

  /** Before an event's projections: writes recorded for this position or after were rolled back. */
  readonly event = (position: number): void => {
    while (this.writes.length && this.writes[this.writes.length - 1]!.position >= position) this.writes.pop();
    this.position = position;
  };

  readonly write = (step: SqlStep, changes: number): void => {
    this.writes.push({ position: this.position, sql: step.sql, params: step.params, changes });
  };

  /** The writes of the events that stand: those up to the copy's head at commit. */
  upTo(last: number): RecordedWrite[] {
    return this.writes.filter((w) => w.position <= last);
  }
}

/**
 * A write decided without the lock, against the copy as it was: the primary takes the lock and writes only
 * if nothing changed since — the chain's head, the read models' epoch, the commands recorded under the
 * keys the transaction checked, the id marks — and answers ErrWriteConflict otherwise.
 */
export interface Expectation {
  head: ChainHead;
  /** Idempotency keys (or command ids) the transaction checked, and the ids under them the copy knew. */
  prefixes: string[];
  known: string[];
  marks: Array<[string, number]>;
}

/** The command ids the copy knows under a key: another node's command under it that is not among them is a conflict. */
export function knownUnder(db: Database, prefix: string): string[] {
  return prepared(db, 'SELECT command_id FROM es_commands WHERE command_id >= ? AND command_id < ?')
    .pluck()
    .all(prefix, `${prefix}~`) as string[];
}

/** The primary's id marks, where they are higher (ids taken by writers that append no `<kind>-<n>` stream). */
export function raiseMarks(db: Database, marks: ReadonlyArray<[string, number]>): void {
  const upsert = prepared(
    db,
    'INSERT INTO es_sequences (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = MAX(value, excluded.value)',
  );
  for (const [name, value] of marks) upsert.run(name, value);
}

/** A write that lost a race: the primary's chain moved while the node decided. The node decides again, holding the lock. */
export const WRITE_CONFLICT = 'ErrWriteConflict';
export const isWriteConflict = (e: unknown): boolean =>
  (e as { code?: unknown } | null)?.code === WRITE_CONFLICT ||
  (e as { cause?: { code?: unknown } } | null)?.cause?.code === WRITE_CONFLICT;
