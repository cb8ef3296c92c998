import type { Database } from 'better-sqlite3';
import type { EventRow } from './event.js';
import { GENESIS_HASH, rowHash } from './hash.js';
import { readAllRows, readHead, type ChainHead } from './store.js';

/**
 * Walks the whole log in position order and checks, for every row: no gap in positions, the link to the
 * previous hash, the row's own hash, and the per-stream version sequence (1, 2, 3…). Then it checks the
 * recorded chain head, which is what catches a deleted tail. It reports the first bad position.
 *
 * It reads inside one read transaction, so appends by other connections during a long walk are not seen
 * half-way; memory stays flat except for one integer per stream.
 */
export type VerifyFailure = 'hash_mismatch' | 'broken_link' | 'position_gap' | 'bad_version_sequence' | 'head_mismatch';

export type VerifyResult =
  | { ok: true; events: number; head: ChainHead }
  | { ok: false; events: number; position: number; reason: VerifyFailure; message: string };

export interface VerifyOptions {
  pageSize?: number;
  onProgress?: (checked: number, total: number) => void;
}

export function verifyChain(db: Database, options: VerifyOptions = {}): VerifyResult {
  return db.transaction(() => walk(db, options))();
}

function walk(db: Database, { pageSize = 10_000, onProgress }: VerifyOptions): VerifyResult {
  const head = readHead(db);
  const versions = new Map<string, number>();
  let expected = 1;
  let prev = GENESIS_HASH;
  for (;;) {
    const page = readAllRows(db, { after: expected - 1, limit: pageSize });
    for (const row of page) {
      const failure = checkRow(row, expected, prev, versions);
      if (failure) return { ok: false, events: expected - 1, ...failure };
      prev = row.hash;
      expected += 1;
    }
    onProgress?.(expected - 1, head.position);
    if (page.length < pageSize) break;
  }
  const last = expected - 1;
  if (head.position > last) {
    return fail(last, last + 1, 'head_mismatch', `the log ends at position ${last} but its head says ${head.position}: events were removed`);
  }
  if (head.position < last || head.hash !== prev) {
    return fail(last, head.position, 'head_mismatch', `the recorded head (position ${head.position}) does not match the chain's last event ${last}`);
  }
  return { ok: true, events: last, head };
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
