import type { Database } from 'better-sqlite3';
import { leafHash } from '../engine/merkle.js';
import { clearMerkle, extendMerkle, LogTree } from '../engine/merkle-store.js';
import { inclusionProof } from '../engine/merkle.js';
import { verifyInclusion } from '../engine/merkle-verify.js';
import { readHead } from '../engine/store.js';
import { prepared } from '../engine/db.js';
import { latestCheckpoint, logId, signatureProblem, type StoredCheckpoint } from './checkpoint.js';
import { signingKeys } from './keys.js';

/**
 * The start-up check of the latest checkpoint (beside the chain check of chain-check.ts): its
 * signature is good and by a key the log names, it is of this log, the log is not shorter, the tree has
 * the signed root — and the row now at the checkpoint's last position is the leaf the root signed, proven
 * against the tree, so a chain re-hashed before that position is caught even where the tree cache was
 * left as it was. Cheap: O(log n) besides catching the cache up. A checkpoint older than an accepted
 * chain break is not checked (latestCheckpoint skips it: the log it signed is gone on purpose).
 *
 * If the root does not match, the cache is rebuilt from the log once before concluding: a damaged cache
 * is not a damaged log.
 */
export type CheckpointProblem = { checkpoint: StoredCheckpoint; position: number; message: string };

export function checkLatestCheckpoint(db: Database): {
  checked: StoredCheckpoint | null;
  problem: CheckpointProblem | null;
} {
  const cp = latestCheckpoint(db);
  if (!cp) return { checked: null, problem: null };
  const body = cp.checkpoint.body;
  const problem = (position: number, message: string) => ({
    checked: cp,
    problem: { checkpoint: cp, position, message: `checkpoint #${cp.n} (${body.treeSize} events): ${message}` },
  });
  const signature = signatureProblem(cp);
  if (signature) return problem(body.treeSize, signature);
  if (!signingKeys(db).keys.some((k) => k.keyId === body.keyId))
    return problem(body.treeSize, `it is signed by key ${body.keyId}, which the log does not name`);
  if (logId(db) !== body.logId)
    return problem(1, 'it is of another log: the log was replaced or rewritten from its first event');
  const head = readHead(db).position;
  if (head < body.treeSize) return problem(head + 1, `the log ends at position ${head}: events were removed`);
  if (holds(db, cp)) return { checked: cp, problem: null };
  db.transaction(() => clearMerkle(db)).immediate();
  if (holds(db, cp)) return { checked: cp, problem: null };
  return problem(
    body.treeSize,
    `the log's first ${body.treeSize} events no longer have the signed root ${body.rootHash}: the log was rewritten`,
  );
}

function holds(db: Database, cp: StoredCheckpoint): boolean {
  const { treeSize, rootHash } = cp.checkpoint.body;
  extendMerkle(db);
  const tree = new LogTree(db, treeSize);
  if (tree.root().toString('hex') !== rootHash) return false;
  const last = prepared(db, 'SELECT hash FROM es_events WHERE position = ?').pluck().get(treeSize) as string;
  return verifyInclusion(
    treeSize - 1,
    treeSize,
    leafHash(Buffer.from(last, 'hex')),
    inclusionProof(tree, treeSize - 1, treeSize),
    Buffer.from(rootHash, 'hex'),
  );
}
