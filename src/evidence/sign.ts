import type { Database } from 'better-sqlite3';
import type { Engine } from '../engine/engine.js';
import { consistencyProof } from '../engine/merkle.js';
import { clearMerkle, extendMerkle } from '../engine/merkle-store.js';
import { verifyConsistency } from '../engine/merkle-verify.js';
import { readHead } from '../engine/store.js';
import {
  checkpointParts,
  latestCheckpoint,
  signBody,
  storeCheckpoint,
  type CheckpointParts,
  type CheckpointReason,
  type SignedCheckpoint,
  type StoredCheckpoint,
} from './checkpoint.js';
import type { SigningKey } from '../signing-key.js';
import { currentSigner } from './keys.js';

/**
 * Signing, made safe against the tree cache: Colony never signs a statement it has not checked. Before a
 * checkpoint is signed, the new tree must extend the latest checkpoint (an RFC 9162 consistency proof
 * against its signed root); a bundle's proofs must also lead to the root they are signed with. A check
 * that fails drops the cache and rebuilds it from the log once — a damaged cache is not a damaged log —
 * and a second failure refuses: the log no longer extends what Colony signed, which is for the start-up
 * check and `colony verify --since` to report, never to paper over with a new signature.
 */
export function readWithSoundTree<T>(db: Database, read: () => T, check: (value: T) => string | null): T {
  for (let attempt = 0; ; attempt += 1) {
    extendMerkle(db);
    const value = db.transaction(read)();
    const problem = check(value);
    if (!problem) return value;
    if (attempt > 0)
      throw new Error(
        `refusing to sign: ${problem}; run "colony verify" (and restart "colony serve", whose start-up check reports it)`,
      );
    db.transaction(() => clearMerkle(db)).immediate();
  }
}

/** Null when `parts` extends the latest stored checkpoint (or there is none to extend); else what is wrong. */
export function extendsLatest(db: Database, parts: Pick<CheckpointParts, 'body' | 'tree'>): string | null {
  const latest = latestCheckpoint(db)?.checkpoint.body; // none signed since an accepted break counts as none
  if (!latest) return null;
  const now = parts.body;
  if (latest.logId !== now.logId) return `the log's first event is not the one the latest checkpoint signed`;
  if (latest.treeSize > now.treeSize)
    return `the log has ${now.treeSize} events, fewer than the latest checkpoint's ${latest.treeSize}`;
  const proof = consistencyProof(parts.tree, latest.treeSize, now.treeSize);
  const ok = verifyConsistency(
    latest.treeSize,
    now.treeSize,
    Buffer.from(latest.rootHash, 'hex'),
    Buffer.from(now.rootHash, 'hex'),
    proof,
  );
  return ok
    ? null
    : `the log does not extend the latest checkpoint (${latest.treeSize} events, root ${latest.rootHash})`;
}

/**
 * Signs a checkpoint of the log as it is now — or returns the latest one when the log has not grown since
 * and the key is still current (a second signature of the same tree says nothing new). The statement is
 * read in one read transaction; the tree cache is brought up first, in its own short transactions.
 */
export function signCheckpoint(engine: Engine, dataDir: string, reason: CheckpointReason, by: string): SignResult {
  // A copy of a PostgreSQL tenant brings in the checkpoints other nodes signed first, and keeps its own there.
  engine.catchUp();
  const key = currentSigner(engine, dataDir, by);
  const sign = () => signCheckpointOn(engine.db, key, engine.clock().toISOString(), reason);
  const replica = engine.replica;
  if (!replica) return sign();
  // On a copy the checkpoint stands only once the store keeps it too: a number another node took first
  // (ErrConcurrency) rolls it back here, and the caller signs again on what that node signed.
  return engine.db.transaction(() => {
    const result = sign();
    if (!result.reused) replica.shareCheckpoint(result.checkpoint.n);
    return result;
  })();
}

/**
 * Stores a checkpoint signed outside signCheckpoint (a bundle's, bundle-export.ts): on a copy of a
 * PostgreSQL tenant it stands only once the store keeps it too, as signCheckpoint's.
 */
export function keepCheckpoint(engine: Engine, signed: SignedCheckpoint, reason: CheckpointReason): StoredCheckpoint {
  const replica = engine.replica;
  if (!replica) return storeCheckpoint(engine.db, signed, reason);
  return engine.db.transaction(() => {
    const stored = storeCheckpoint(engine.db, signed, reason);
    replica.shareCheckpoint(stored.n);
    return stored;
  })();
}

export interface SignResult {
  checkpoint: StoredCheckpoint;
  reused: boolean;
}

/** The same on a bare connection with a key at hand (the checkpoint worker's: no engine, no projections). */
export function signCheckpointOn(db: Database, key: SigningKey, time: string, reason: CheckpointReason): SignResult {
  const signed = prepareCheckpointOn(db, key, time);
  if (!signed) return { checkpoint: latestCheckpoint(db)!, reused: true };
  return { checkpoint: storeCheckpoint(db, signed, reason), reused: false };
}

/**
 * The checkpoint of the log as it is now, checked against the latest and signed, but not stored — null
 * when the latest already says it. The checkpoint worker of a node's copy of a PostgreSQL tenant
 * prepares it so; the node keeps it (copy-checkpoint.ts), in the store too.
 */
export function prepareCheckpointOn(db: Database, key: SigningKey, time: string): SignedCheckpoint | null {
  const latest = latestCheckpoint(db);
  const parts = readWithSoundTree(
    db,
    () => {
      const size = readHead(db).position;
      if (latest && latest.checkpoint.body.treeSize === size && latest.checkpoint.body.keyId === key.keyId) return null;
      return checkpointParts(db, key.keyId, time, size);
    },
    (p) => (p ? extendsLatest(db, p) : null),
  );
  return parts ? signBody(key, parts.body) : null;
}
