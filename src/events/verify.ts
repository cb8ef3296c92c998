import type { Database } from 'better-sqlite3';
import type { EventRow } from './event.js';
import { GENESIS_HASH, rowHash } from './hash.js';
import { recordedLogEnd } from './commands.js';
import { readAllRows, type ChainHead } from './store.js';

/**
 * Walks the whole log in position order and checks, for every row: no gap in positions, the link to the
 * previous hash, the row's own hash, and the per-stream version sequence (1, 2, 3…). Then it checks the
 * log's end against the end every command recorded (`$log` in es_projections), which is what catches a deleted tail (the chain
 * alone cannot tell a truncated log from a short one) and rows slipped in after the last command.
 * It reports the first bad position. Re-hashing the whole chain after an edit is only caught against a
 * head kept outside the database: `colony verify` prints it for auditors to record.
 *
 * It reads inside one read transaction, so appends by other connections during a long walk are not seen
 * half-way; memory stays flat except for one integer per stream.
 */
export type VerifyFailure = 'hash_mismatch' | 'broken_link' | 'position_gap' | 'bad_version_sequence' | 'head_mismatch';

export type VerifyResult =
  | { ok: true; events: number; head: ChainHead }
  | { ok: false; events: number; position: number; reason: VerifyFailure; message: string };

export interface VerifyOptions {
  /** A head recorded earlier (e.g. from `colony verify --json`): the log must still hold it, unchanged. */
  expectHead?: ChainHead;
  pageSize?: number;
  onProgress?: (checked: number, total: number) => void;
}

export function verifyChain(db: Database, options: VerifyOptions = {}): VerifyResult {
  return db.transaction(() => walk(db, options))();
}

function walk(db: Database, { pageSize = 10_000, onProgress, expectHead }: VerifyOptions): VerifyResult {
  const total = recordedLogEnd(db);
  const versions = new Map<string, number>();
  let expected = 1;
  let prev = GENESIS_HASH;
  for (;;) {
    const page = readAllRows(db, { after: expected - 1, limit: pageSize });
    for (const row of page) {
      const failure = checkRow(row, expected, prev, versions);
      if (failure) return { ok: false, events: expected - 1, ...failure };
      if (expectHead && row.position === expectHead.position && row.hash !== expectHead.hash) {
        return fail(expected - 1, row.position, 'head_mismatch', `position ${row.position} no longer has the recorded head hash: the chain was rewritten`);
      }
      prev = row.hash;
      expected += 1;
    }
    onProgress?.(expected - 1, total);
    if (page.length < pageSize) break;
  }
  const last = expected - 1;
  if (total > last) {
    return fail(last, last + 1, 'head_mismatch', `the log ends at position ${last} but commands recorded it up to ${total}: events were removed`);
  }
  if (expectHead && expectHead.position > last) {
    return fail(last, last + 1, 'head_mismatch', `the recorded head is at position ${expectHead.position} but the log ends at ${last}`);
  }
  if (total < last) {
    return fail(last, total + 1, 'head_mismatch', `positions ${total + 1}–${last} were not appended by a command`);
  }
  return { ok: true, events: last, head: { position: last, hash: prev } };
}

function checkRow(
  row: EventRow,
  expected: number,
  prev: string,
  versions: Map<string, number>,
): { position: number; reason: VerifyFailure; message: string } | null {
  if (row.position !== expected) {
    return { position: expected, reason: 'position_gap', message: `position ${expected} is missing (next is ${row.position})` };
  }
  if (row.prev_hash !== prev) {
    return { position: row.position, reason: 'broken_link', message: `prev_hash does not match the hash of position ${row.position - 1}` };
  }
  if (rowHash(row) !== row.hash) {
    return { position: row.position, reason: 'hash_mismatch', message: `the stored hash does not match the row's content` };
  }
  const last = versions.get(row.stream_id) ?? 0;
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
