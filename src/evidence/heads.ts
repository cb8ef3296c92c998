import type { Database } from 'better-sqlite3';
import { prepared } from '../engine/db.js';
import { positionsSql } from '../engine/projection-positions.js';
import { hash } from 'node:crypto';
import { nodeHash, rootOfLeaves, splitPoint, EMPTY_ROOT, type SubtreeHashes } from '../engine/merkle.js';

/**
 * The stream heads a checkpoint commits to: for every stream, its last version at or before the
 * checkpoint's tree size and that event's hash. With them a bundle proves completeness — a stream whose
 * head is version 9 must show versions 1–9, the 9th with the head's hash.
 *
 * Leaves are sorted by the UTF-8 bytes of the stream id (SQLite's BINARY order; a verifier sorts with
 * Buffer.compare), each leaf = SHA-256(0x00 ‖ UTF-8 of the canonical JSON {hash, streamId, version}), hashed
 * into a tree the way the log's tree is (RFC 9162).
 */
export interface StreamHead {
  streamId: string;
  version: number;
  hash: string;
}

/**
 * The canonical JSON {hash, streamId, version} written out (its keys are already in RFC 8785 order; a hash
 * is hex), hashed with its 0x00 leaf prefix in one call: a checkpoint hashes one of these per stream.
 */
export function headLeaf(head: StreamHead): Buffer {
  return hash(
    'sha256',
    `\u0000{"hash":"${head.hash}","streamId":${JSON.stringify(head.streamId)},"version":${head.version}}`,
    'buffer',
  );
}

/**
 * Every stream's head at `size`. When the caller reads in one transaction at the log's head, the `streams`
 * projection — applied in the same transactions as the log, the head's hash copied from its row — has them
 * in one ordered scan of streams, checked against the log's index; otherwise (a projection behind, being rebuilt, an older size, or
 * `fromLog`: an auditor's check, which trusts no read table) a scan of the log itself.
 */
export function streamHeads(db: Database, size: number, options: { fromLog?: boolean } = {}): StreamHead[] {
  const streams = prepared(db, `SELECT position, stale FROM (${positionsSql(db)}) WHERE name = 'streams'`).get() as
    { position: number; stale: number } | undefined;
  if (!options.fromLog && streams && streams.stale === 0 && streams.position === size) {
    const rows = prepared(db, 'SELECT stream_id, version, last_hash FROM streams ORDER BY stream_id').raw().all() as [
      string,
      number,
      string | null,
    ][];
    const heads: StreamHead[] = new Array(rows.length);
    let complete = true;
    for (let i = 0; i < rows.length && complete; i++) {
      const [streamId, version, hash] = rows[i]!;
      complete = hash !== null; // a row projected where the log was not at hand (a replay) has none
      heads[i] = { streamId, version, hash: hash! };
    }
    if (complete && sameStreamsAsLog(db, heads)) return heads;
  }
  return prepared(
    db,
    `SELECT stream_id AS streamId, MAX(version) AS version, hash FROM es_events WHERE position <= ?
    GROUP BY stream_id ORDER BY stream_id`,
  ).all(size) as StreamHead[];
}

/**
 * The read table is only a faster way to the log's heads, and the database can be edited behind Colony's
 * back: a lowered version would have Colony sign that a stream ends early, and a bundle could then leave
 * out its last events. So its streams and versions are checked against the log's own (stream, version)
 * index, read whole — a covering index scan, no table rows. (A wrong hash only makes that stream's bundle
 * fail its head check: each head event is proven in the log's tree.)
 */
function sameStreamsAsLog(db: Database, heads: readonly StreamHead[]): boolean {
  const log = prepared(db, 'SELECT stream_id, MAX(version) FROM es_events GROUP BY stream_id ORDER BY stream_id')
    .raw()
    .all() as [string, number][];
  return (
    log.length === heads.length &&
    log.every(([streamId, version], i) => heads[i]!.streamId === streamId && heads[i]!.version === version)
  );
}

/** The heads tree in memory (a log has far fewer streams than events). */
export class HeadsTree implements SubtreeHashes {
  readonly leaves: Buffer[];
  private readonly memo = new Map<string, Buffer>();
  private readonly index = new Map<string, number>();

  constructor(readonly heads: readonly StreamHead[]) {
    this.leaves = heads.map(headLeaf);
    heads.forEach((h, i) => this.index.set(h.streamId, i));
  }

  root(): Buffer {
    return this.heads.length === 0 ? EMPTY_ROOT : this.range(0, this.heads.length);
  }

  indexOf(streamId: string): number | undefined {
    return this.index.get(streamId);
  }

  range(start: number, size: number): Buffer {
    if (size === 1) return this.leaves[start]!;
    const key = `${start}:${size}`;
    let hash = this.memo.get(key);
    if (!hash) {
      const k = splitPoint(size);
      hash =
        size <= 64
          ? rootOfLeaves(this.leaves, start, size)
          : nodeHash(this.range(start, k), this.range(start + k, size - k));
      this.memo.set(key, hash);
    }
    return hash;
  }
}
