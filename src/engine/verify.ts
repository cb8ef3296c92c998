import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import type { EventRow } from './event.js';
import { GENESIS_HASH, rowHash } from './hash.js';
import {
  CHAIN_BREAK_ACCEPTED,
  CHAIN_STREAM,
  readLogAnchor,
  type ChainBreakAcceptedData,
  type LogAnchor,
} from './anchor.js';
import { readAllRows, readHead, type ChainHead } from './store.js';

/**
 * Walks the log in position order and checks, for every row: no gap in positions, the link to the
 * previous hash, the row's own hash, and the per-stream version sequence (1, 2, 3…). Then it checks the
 * log's end against the end every command recorded (`$log` in es_projections), which is what catches a
 * deleted tail (the chain alone cannot tell a truncated log from a short one) and rows slipped in after
 * the last command.
 * It reports the first bad position. Re-hashing the whole chain after an edit is only caught against a
 * head kept outside the database: `colony verify` prints it for auditors to record.
 *
 * The full walk (the auditor's) also fails a log that records an accepted break (ChainBreakAccepted)
 * even where the chain holds again — a cut tail leaves no trace in the chain once it is re-anchored, and
 * an audit must keep saying the log is not whole. A walk `from` an anchor (the start-up check) checks
 * only the rows after it, and the log end's hash as well as its position.
 *
 * It reads inside one read transaction, so appends by other connections during a long walk are not seen
 * half-way; memory stays flat except for one integer per stream.
 */
export type VerifyFailure =
  'hash_mismatch' | 'broken_link' | 'position_gap' | 'bad_version_sequence' | 'head_mismatch' | 'accepted_break';

export type VerifyResult =
  | { ok: true; events: number; head: ChainHead }
  | { ok: false; events: number; position: number; reason: VerifyFailure; message: string };

export interface VerifyOptions {
  /** A head recorded earlier (e.g. from `colony verify --json`): the log must still hold it, unchanged. */
  expectHead?: ChainHead;
  /**
   * A head verified earlier: walk only the rows after it (`events` counts those). Its row must still be
   * there with that hash; streams begun before it continue from their version at it.
   */
  from?: ChainHead;
  pageSize?: number;
  onProgress?: (checked: number, total: number) => void;
  /** Called with every row once it is verified, in position order (`verify --since` builds its Merkle tree from them). */
  onRow?: (row: EventRow) => void;
}

export type Failure = { position: number; reason: VerifyFailure; message: string };

export function verifyChain(db: Database, options: VerifyOptions = {}): VerifyResult {
  return db.transaction(() => walk(db, options))();
}

function walk(db: Database, { pageSize = 10_000, onProgress, onRow, expectHead, from }: VerifyOptions): VerifyResult {
  const logEnd = readLogAnchor(db);
  const total = logEnd?.position ?? 0;
  const start = from ?? { position: 0, hash: GENESIS_HASH };
  const anchorFailure = start.position > 0 ? anchorProblem(db, start) : null;
  if (anchorFailure) return { ok: false, events: 0, ...anchorFailure };
  const versions = new Map<string, number>();
  const before = start.position > 0 ? (stream: string) => versionAt(db, stream, start.position) : () => 0;
  let expected = start.position + 1;
  let prev = start.hash;
  let accepted: EventRow | null = null;
  for (;;) {
    const page = readAllRows(db, { after: expected - 1, limit: pageSize });
    for (const row of page) {
      const failure = checkChainRow(row, expected, prev, versions, before);
      if (failure) return { ok: false, events: expected - 1 - start.position, ...failure };
      if (expectHead && row.position === expectHead.position && row.hash !== expectHead.hash) {
        return fail(
          expected - 1 - start.position,
          row.position,
          'head_mismatch',
          `position ${row.position} no longer has the recorded head hash: the chain was rewritten`,
        );
      }
      if (!accepted && row.type === CHAIN_BREAK_ACCEPTED && row.stream_id === CHAIN_STREAM) accepted = row;
      onRow?.(row);
      prev = row.hash;
      expected += 1;
    }
    onProgress?.(expected - 1 - start.position, Math.max(total - start.position, 0));
    if (page.length < pageSize) break;
  }
  const head = { position: expected - 1, hash: prev };
  const events = head.position - start.position;
  const endFailure = endProblem(head, logEnd, expectHead, from !== undefined);
  if (endFailure) return { ok: false, events, ...endFailure };
  if (!from && accepted) return acceptedFailure(events, accepted);
  return { ok: true, events, head };
}

/**
 * The walk's last row against the end every command recorded (a deleted tail, rows slipped in after the
 * last command) and against the head the caller expects; a walk from an anchor also compares the hash.
 */
export function endProblem(
  head: ChainHead,
  logEnd: LogAnchor | null,
  expectHead: ChainHead | undefined,
  anchored: boolean,
): Failure | null {
  const last = head.position;
  const total = logEnd?.position ?? 0;
  const problem = (position: number, message: string): Failure => ({ position, reason: 'head_mismatch', message });
  if (total > last)
    return problem(
      last + 1,
      `the log ends at position ${last} but commands recorded it up to ${total}: events were removed`,
    );
  if (expectHead && expectHead.position > last)
    return problem(last + 1, `the recorded head is at position ${expectHead.position} but the log ends at ${last}`);
  if (total < last) return problem(total + 1, `positions ${total + 1}–${last} were not appended by a command`);
  if (anchored && logEnd?.hash !== head.hash)
    return problem(last, `the last row (position ${last}) is not the one the last command wrote: its hash changed`);
  return null;
}

/** The anchor's own row: still there, intact, and still the one that was verified. */
function anchorProblem(db: Database, anchor: ChainHead): Failure | null {
  const row = readAllRows(db, { after: anchor.position - 1, limit: 1 })[0];
  if (!row) {
    const end = readHead(db).position;
    return {
      position: end + 1,
      reason: 'head_mismatch',
      message: `the log ends at position ${end}, before the verified anchor at ${anchor.position}: events were removed`,
    };
  }
  if (row.position !== anchor.position) {
    return {
      position: anchor.position,
      reason: 'position_gap',
      message: `position ${anchor.position} (the verified anchor) is missing (next is ${row.position})`,
    };
  }
  if (rowHash(row) !== row.hash)
    return {
      position: row.position,
      reason: 'hash_mismatch',
      message: `the stored hash does not match the row's content`,
    };
  if (row.hash !== anchor.hash) {
    return {
      position: row.position,
      reason: 'head_mismatch',
      message: `position ${row.position} no longer has the verified anchor's hash: the chain was rewritten`,
    };
  }
  return null;
}

/** A stream's version at `position`: where a walk from an anchor continues its sequence. */
const versionAt = (db: Database, stream: string, position: number): number =>
  prepared(db, 'SELECT COALESCE(MAX(version), 0) FROM es_events WHERE stream_id = ? AND position <= ?')
    .pluck()
    .get(stream, position) as number;

function acceptedFailure(events: number, row: EventRow): VerifyResult {
  const b = JSON.parse(row.data) as ChainBreakAcceptedData;
  return fail(
    events,
    b.position,
    'accepted_break',
    `the break here (${b.reason}: ${b.message}) was accepted by ${b.operator} at ` +
      `${row.recorded_at}, recorded as ChainBreakAccepted at position ${row.position}; the chain holds after it, but the log is not what was written`,
  );
}

/** One row of a chain walk: the next position, linked to the previous hash, its own hash, its stream's next version. */
export function checkChainRow(
  row: EventRow,
  expected: number,
  prev: string,
  versions: Map<string, number>,
  before: (stream: string) => number,
): Failure | null {
  if (row.position !== expected) {
    return {
      position: expected,
      reason: 'position_gap',
      message: `position ${expected} is missing (next is ${row.position})`,
    };
  }
  if (row.prev_hash !== prev) {
    return {
      position: row.position,
      reason: 'broken_link',
      message: `prev_hash does not match the hash of position ${row.position - 1}`,
    };
  }
  if (rowHash(row) !== row.hash) {
    return {
      position: row.position,
      reason: 'hash_mismatch',
      message: `the stored hash does not match the row's content`,
    };
  }
  const last = versions.get(row.stream_id) ?? before(row.stream_id);
  if (row.version !== last + 1) {
    return {
      position: row.position,
      reason: 'bad_version_sequence',
      message: `stream ${row.stream_id} jumps from version ${last} to ${row.version}`,
    };
  }
  versions.set(row.stream_id, row.version);
  return null;
}

const fail = (events: number, position: number, reason: VerifyFailure, message: string): VerifyResult => ({
  ok: false,
  events,
  position,
  reason,
  message,
});
