import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import { LOG_ROW, materializePositions } from './anchor.js';

/**
 * Where each projection is, written once per command for all of them. Every command used to move every
 * projection's row of es_projections to its last position (and the log's `$log` row with them): one
 * UPDATE of ~20 rows, about a seventh of a small command's time. Now the `$log` row names its
 * `followers` — the projections that applied every event up to its position — and a command whose
 * process applies exactly that set moves the `$log` row alone. A projection's position is the `$log`
 * row's while it is a follower, its own row's otherwise.
 *
 * Anything else that sets positions or the anchor (a rebuild, a catch-up, an accepted chain break, a
 * process with another set of projections) first writes the followers' positions into their own rows
 * and empties the list (`materialize`), so rows are exact again before they change, and a command of
 * such a process takes the old way: each of its projections advances only from the position it was at,
 * one that was not there is marked stale, and the list becomes its set again only if all of them were.
 * A process that knows nothing of the list (older code) moves `$log` without it and marks the rows
 * behind it stale: rebuilt on the next start, as a projection missed by another process always was.
 */
export const EFFECTIVE_POSITION = `CASE WHEN instr(',' || l.followers || ',', ',' || p.name || ',') > 0 THEN l.position ELSE p.position END`;

/** Every projection's row with its effective position (not the `$log` row). */
export const POSITIONS_SQL = `SELECT p.name AS name, p.version AS version, ${EFFECTIVE_POSITION} AS position, p.stale AS stale
  FROM es_projections p JOIN es_projections l ON l.name = '${LOG_ROW}' WHERE p.name <> '${LOG_ROW}'`;

/** Rows written before engine schema v5 have no followers: each row is exact (a read-only open of an older file). */
const EXACT_ROWS_SQL = `SELECT name, version, position, stale FROM es_projections WHERE name <> '${LOG_ROW}'`;
const hasFollowers = new WeakSet<Database>();

/** The query for every projection's effective position on this database, whatever its schema version. */
export function positionsSql(db: Database): string {
  if (hasFollowers.has(db)) return POSITIONS_SQL;
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('es_projections') as string[];
  if (!columns.includes('followers')) return EXACT_ROWS_SQL;
  hasFollowers.add(db); // a column once added stays
  return POSITIONS_SQL;
}

export class PositionWriter {
  /** This process's projections as the `$log` row lists them: sorted, comma-separated. */
  private readonly set: string;
  private readonly names: string;
  private readonly count: number;

  constructor(names: readonly string[]) {
    for (const n of names) if (n.includes(',')) throw new Error(`projection names may not contain a comma: ${n}`);
    this.set = [...names].sort().join(',');
    // Names come from code, never from input; quoted as SQL literals so the UPDATE needs no json_each.
    this.names = [LOG_ROW, ...names].map((n) => `'${n.replaceAll("'", "''")}'`).join(', ');
    this.count = names.length + 1;
  }

  /**
   * Records that this process's projections applied the events after `previous` up to `last`, and anchors
   * the log's end at `last` with that row's hash (what the next command checks the tail against:
   * engine/anchor.ts). A projection whose position was not `previous` missed events another process
   * appended without it: it is marked stale (it is applied inline from here on; only a rebuild fixes it).
   */
  advance(db: Database, previous: number, last: number): void {
    const moved = prepared(
      db,
      `UPDATE es_projections SET position = ?, hash = (SELECT hash FROM es_events WHERE position = ?)
        WHERE name = '${LOG_ROW}' AND position = ? AND followers = ?`,
    ).run(last, last, previous, this.set);
    if (moved.changes === 1) return;
    materializePositions(db);
    const advanced = prepared(
      db,
      `UPDATE es_projections SET position = ?, hash = CASE name WHEN '${LOG_ROW}' THEN (SELECT hash FROM es_events WHERE position = ?) ELSE hash END
        WHERE position = ? AND name IN (${this.names})`,
    ).run(last, last, previous);
    if (advanced.changes < this.count) {
      prepared(db, `UPDATE es_projections SET stale = 1 WHERE position <> ? AND name IN (${this.names})`).run(last);
      return;
    }
    prepared(db, `UPDATE es_projections SET followers = ? WHERE name = '${LOG_ROW}'`).run(this.set);
  }
}
