import type { Database } from 'better-sqlite3';
import { prepared } from './db.js';
import { leafHash, nodeHash, rootOfLeaves, splitPoint, EMPTY_ROOT, type SubtreeHashes } from './merkle.js';
import { readHead } from './store.js';

/**
 * The log's Merkle tree (engine/merkle.ts) over es_events, with the complete subtrees of 16 leaves and
 * more (level ≥ TILE) cached in es_merkle. The cache is filled lazily — by checkpoints, exports and
 * `verify --since` — so appending an event costs nothing more; catching up costs one leaf hash per new
 * event plus one node per 16 events (amortized), in chunks of a few thousand events per transaction so a
 * long catch-up never holds the write lock for long. Leaf i (0-based) is the event at position i + 1.
 */
export const TILE = 4;
const TILE_LEAVES = 1 << TILE;
const CHUNK_TILES = 512; // 8,192 events per catch-up transaction

/** How many leaves the cache covers (a multiple of 16): the end of its last level-TILE node. */
export function cachedLeaves(db: Database): number {
  const idx = prepared(db, 'SELECT MAX(idx) FROM es_merkle WHERE level = ?').pluck().get(TILE) as number | null;
  return idx === null ? 0 : (idx + 1) * TILE_LEAVES;
}

/** Leaf hashes of positions [start + 1, start + count]; throws if the log has a hole there. */
export function readLeaves(db: Database, start: number, count: number): Buffer[] {
  const hashes = prepared(db, 'SELECT hash FROM es_events WHERE position > ? AND position <= ? ORDER BY position')
    .pluck()
    .all(start, start + count) as string[];
  if (hashes.length !== count)
    throw new Error(`the log has no event at some position in ${start + 1}–${start + count}: run "colony verify"`);
  return hashes.map((h) => leafHash(Buffer.from(h, 'hex')));
}

/**
 * Brings the cache up to the last complete tile of the log. Each chunk is its own IMMEDIATE transaction,
 * so a crash leaves a cache that is shorter, never wrong. Returns the leaves covered.
 */
export function extendMerkle(db: Database, onProgress?: (done: number, total: number) => void): number {
  for (;;) {
    const step = db
      .transaction(() => {
        const from = cachedLeaves(db);
        const end = Math.floor(readHead(db).position / TILE_LEAVES) * TILE_LEAVES;
        const to = Math.min(end, from + CHUNK_TILES * TILE_LEAVES);
        if (to > from) foldTiles(db, from, to);
        return { to, end };
      })
      .immediate();
    onProgress?.(step.to, step.end);
    if (step.to >= step.end) return step.to;
  }
}

function foldTiles(db: Database, from: number, to: number): void {
  const leaves = readLeaves(db, from, to - from);
  const insert = prepared(db, 'INSERT INTO es_merkle (level, idx, hash) VALUES (?, ?, ?)');
  const get = prepared(db, 'SELECT hash FROM es_merkle WHERE level = ? AND idx = ?').pluck();
  for (let t = 0; t < leaves.length / TILE_LEAVES; t += 1) {
    let level = TILE;
    let idx = from / TILE_LEAVES + t;
    let hash = rootOfLeaves(leaves, t * TILE_LEAVES, TILE_LEAVES);
    insert.run(level, idx, hash);
    // A right child completes its parent: climb while this node is one.
    while (idx % 2 === 1) {
      hash = nodeHash(get.get(level, idx - 1) as Buffer, hash);
      level += 1;
      idx = (idx - 1) / 2;
      insert.run(level, idx, hash);
    }
  }
}

/** Drops the cache: after an accepted chain break the leaves it was built from are not the log's any more. */
export function clearMerkle(db: Database): void {
  prepared(db, 'DELETE FROM es_merkle').run();
}

/**
 * Subtree hashes of the log for one reader: cached complete subtrees where the cache has them, the rest
 * from leaves, every answer remembered (a goal's proofs share their upper nodes). Use it inside one read
 * transaction, or over positions that are already written (they never change).
 */
export class LogTree implements SubtreeHashes {
  private readonly memo = new Map<string, Buffer>();
  private readonly tiles = new Map<number, Buffer[]>();
  private readonly nodes: TileNodes;

  /** `nodes`: where complete subtrees come from — the es_merkle cache unless given (a verifier's own). */
  constructor(
    private readonly db: Database,
    readonly size: number,
    nodes?: TileNodes,
  ) {
    this.nodes = nodes ?? cacheNodes(db);
  }

  root(): Buffer {
    return this.size === 0 ? EMPTY_ROOT : this.range(0, this.size);
  }

  range(start: number, size: number): Buffer {
    if (size === 1) return this.leaf(start);
    const key = `${start}:${size}`;
    let hash = this.memo.get(key);
    if (!hash) {
      hash = this.compute(start, size);
      this.memo.set(key, hash);
    }
    return hash;
  }

  private compute(start: number, size: number): Buffer {
    const perfect = (size & (size - 1)) === 0 && start % size === 0;
    if (perfect && size >= TILE_LEAVES && start + size <= Math.min(this.nodes.covered, this.size)) {
      const hash = this.nodes.get(Math.log2(size), start / size);
      if (hash) return hash;
    }
    const k = splitPoint(size);
    return nodeHash(this.range(start, k), this.range(start + k, size - k));
  }

  private leaf(index: number): Buffer {
    const tile = Math.floor(index / TILE_LEAVES);
    let leaves = this.tiles.get(tile);
    if (!leaves) {
      const start = tile * TILE_LEAVES;
      leaves = readLeaves(this.db, start, Math.min(TILE_LEAVES, this.size - start));
      this.tiles.set(tile, leaves);
    }
    return leaves[index % TILE_LEAVES]!;
  }
}

/** Complete subtrees (level ≥ TILE) of the first `covered` leaves. */
export interface TileNodes {
  readonly covered: number;
  get(level: number, idx: number): Buffer | undefined;
}

function cacheNodes(db: Database): TileNodes {
  const select = prepared(db, 'SELECT hash FROM es_merkle WHERE level = ? AND idx = ?').pluck();
  return { covered: cachedLeaves(db), get: (level, idx) => select.get(level, idx) as Buffer | undefined };
}

/**
 * The same nodes computed in memory from leaves fed in order — what `verify --since` builds from the rows
 * it has just verified, so its proofs never rest on the cache it cannot vouch for.
 */
export class TileBuilder implements TileNodes {
  private readonly levels: Buffer[][] = [];
  private pending: Buffer[] = [];
  covered = 0;

  push(leaf: Buffer): void {
    this.pending.push(leaf);
    if (this.pending.length < TILE_LEAVES) return;
    let level = TILE;
    let hash = rootOfLeaves(this.pending);
    this.pending = [];
    for (;;) {
      const row = (this.levels[level] ??= []);
      row.push(hash);
      const idx = row.length - 1;
      if (idx % 2 === 0) break;
      hash = nodeHash(row[idx - 1]!, hash);
      level += 1;
    }
    this.covered += TILE_LEAVES;
  }

  get(level: number, idx: number): Buffer | undefined {
    return this.levels[level]?.[idx];
  }
}
