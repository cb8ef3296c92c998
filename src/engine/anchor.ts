import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import { DomainError } from '../errors.js';
import type { EventMeta, StoredEvent } from './event.js';
import { GENESIS_HASH } from './hash.js';
import { clearMerkle } from './merkle-store.js';
import { appendToStream, readHead, readStream, type ChainHead } from './store.js';

/**
 * The log end's anchor: the `$log` row of es_projections holds the position and hash of the last row a
 * command (or an import) appended, written in the same statement that advances the projections.
 *
 * Every outermost command checks the real tail against it before writing anything, so a log whose tail
 * was cut, re-grown or rewritten behind Colony's back is never continued: appending to it would advance
 * the anchor over the damage and hide it from `verify`. The only way on is an operator's explicit
 * acceptance (`--accept-broken-chain`), which is itself an event in the log: `ChainBreakAccepted`.
 */
export const LOG_ROW = '$log';
/** The stream of the log's own events (acceptances of breaks): never a domain's. */
export const CHAIN_STREAM = 'chain-1';
export const CHAIN_BREAK_ACCEPTED = 'ChainBreakAccepted';

export interface LogAnchor {
  position: number;
  /** NULL when migration 2 found no row at the recorded position: no tail matches it. */
  hash: string | null;
}

export function readLogAnchor(db: Database): LogAnchor | null {
  return (
    (prepared(db, `SELECT position, hash FROM es_projections WHERE name = '${LOG_ROW}'`).get() as
      LogAnchor | undefined) ?? null
  );
}

// One statement on the hot path: MAX(position) of an INTEGER PRIMARY KEY is one B-tree descent.
const GUARD = `SELECT l.position AS anchorPosition, l.hash AS anchorHash, h.position AS headPosition, h.hash AS headHash
  FROM es_projections l LEFT JOIN es_events h ON h.position = (SELECT MAX(position) FROM es_events) WHERE l.name = '${LOG_ROW}'`;

/** Throws ErrChainBroken unless the log's last row is the one the last command left. Run before any write. */
export function assertAnchored(db: Database): void {
  const row = prepared(db, GUARD).get() as
    | { anchorPosition: number; anchorHash: string | null; headPosition: number | null; headHash: string | null }
    | undefined;
  const head = { position: row?.headPosition ?? 0, hash: row?.headHash ?? GENESIS_HASH };
  if (row && row.anchorPosition === head.position && row.anchorHash === head.hash) return;
  const anchor = row ? { position: row.anchorPosition, hash: row.anchorHash } : null;
  const what = !anchor
    ? `the log's anchor row (${LOG_ROW} in es_projections) is missing`
    : anchor.position === head.position
      ? `the last row (position ${head.position}) is not the one the last command wrote: its hash changed`
      : `the log ends at position ${head.position} but the last command left it at position ${anchor.position}`;
  throw new DomainError(
    'ErrChainBroken',
    `${what}: the log was altered outside Colony, so nothing is appended to it; run "colony verify", then restart ` +
      `"colony serve" with --accept-broken-chain to accept the log as it is`,
    { headPosition: head.position, anchorPosition: anchor?.position ?? null },
  );
}

/** Moves the anchor to `head` (or recreates the row an attacker deleted); its followers keep their own positions. */
export function setLogAnchor(db: Database, head: ChainHead): void {
  materializePositions(db);
  prepared(
    db,
    `INSERT INTO es_projections (name, version, position, hash) VALUES ('${LOG_ROW}', 1, ?, ?)
    ON CONFLICT(name) DO UPDATE SET position = excluded.position, hash = excluded.hash`,
  ).run(head.position, head.hash);
}

/**
 * Writes the position of the `$log` row's followers (engine/projection-positions.ts) into their own rows
 * and empties the list: the rows alone say where each projection is, before anything but a command's
 * own advance sets a position or moves the anchor.
 */
export function materializePositions(db: Database): void {
  prepared(
    db,
    `UPDATE es_projections AS p SET position = l.position FROM es_projections AS l
      WHERE l.name = '${LOG_ROW}' AND p.name <> '${LOG_ROW}' AND instr(',' || l.followers || ',', ',' || p.name || ',') > 0`,
  ).run();
  prepared(db, `UPDATE es_projections SET followers = '' WHERE name = '${LOG_ROW}' AND followers <> ''`).run();
}

export interface ChainBreak {
  /** The first bad position the check found, its reason and message. */
  position: number;
  reason: string;
  message: string;
  /** The verified anchor the check walked from; null for a walk from the genesis. */
  previousAnchor: ChainHead | null;
  /** Who accepted it: the operating-system user and host that passed the flag, and through which command. */
  operator: string;
  command: string;
}

export interface ChainBreakAcceptedData extends ChainBreak {
  /** What `$log` said before the acceptance re-anchored it. */
  logEnd: LogAnchor | null;
  /** The real tail the acceptance continues. */
  tail: ChainHead;
}

/**
 * Records an accepted break in one transaction: re-anchors the log end at the real tail, appends
 * ChainBreakAccepted after it and anchors there, and marks every projection stale, so the read tables
 * (and the Merkle tree cache) are rebuilt from the log as it now is — on this start, or on the next one if this process dies first.
 */
export function acceptChainBreak(
  db: Database,
  accepted: ChainBreak,
  meta: EventMeta,
  at: string,
): { event: StoredEvent; head: ChainHead } {
  return db
    .transaction(() => {
      const tail = readHead(db);
      const data: ChainBreakAcceptedData = { ...accepted, logEnd: readLogAnchor(db), tail };
      const [event] = appendToStream(db, CHAIN_STREAM, 'any', [{ type: CHAIN_BREAK_ACCEPTED, data }], meta, at);
      const head = readHead(db);
      setLogAnchor(db, head);
      prepared(db, `UPDATE es_projections SET stale = 1 WHERE name <> '${LOG_ROW}'`).run();
      clearMerkle(db); // the tree cache was built from the leaves the break changed
      // Decider snapshots too: an event changed below a snapshot's version leaves its (version, hash) intact.
      prepared(db, 'DELETE FROM es_snapshots').run();
      return { event: event!, head };
    })
    .immediate();
}

export interface AcceptedBreak extends ChainBreakAcceptedData {
  /** Where the acceptance itself sits in the log, and when it was recorded. */
  acceptedAt: number;
  recordedAt: string;
}

/** Every break accepted so far, oldest first (one indexed stream read). */
export function acceptedBreaks(db: Database): AcceptedBreak[] {
  return readStream(db, CHAIN_STREAM)
    .filter((e) => e.type === CHAIN_BREAK_ACCEPTED)
    .map((e) => ({ ...(e.data as ChainBreakAcceptedData), acceptedAt: e.position, recordedAt: e.recordedAt }));
}

/** The last acceptance's own row: a verified anchor recorded in the log. */
export function latestAcceptance(db: Database): ChainHead | null {
  return (
    (prepared(
      db,
      `SELECT position, hash FROM es_events WHERE stream_id = ? AND type = ? ORDER BY version DESC LIMIT 1`,
    ).get(CHAIN_STREAM, CHAIN_BREAK_ACCEPTED) as ChainHead | undefined) ?? null
  );
}

/** One line for an accepted break, for `verify` and the start-up check. */
export const describeAcceptance = (b: AcceptedBreak): string =>
  `the break at position ${b.position} (${b.reason}) was accepted by ${b.operator} at ${b.recordedAt} (ChainBreakAccepted at position ${b.acceptedAt})`;
