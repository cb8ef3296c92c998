import type { Database } from 'better-sqlite3';
import { consistencyProof, leafHash } from '../engine/merkle.js';
import { LogTree, TileBuilder } from '../engine/merkle-store.js';
import { verifyConsistency } from '../engine/merkle-verify.js';
import type { ChainHead } from '../engine/store.js';
import { verifyChain, type VerifyResult } from '../engine/verify.js';
import { logId, signatureProblem, type SignedCheckpoint } from './checkpoint.js';
import { HeadsTree, streamHeads } from './heads.js';
import { signingKeys } from './keys.js';

/**
 * `colony verify --since CHECKPOINT`: the chain walk of `verify`, and then the proof that today's log
 * extends the checkpoint an auditor kept — an RFC 9162 consistency proof from its tree size to today's,
 * checked against the root it signed and the root of the rows just verified. A chain re-hashed from any
 * point before the checkpoint's end gives another root, so this catches what the chain alone cannot,
 * without a head recorded by hand. The tree is built in memory from the verified rows, never from the
 * database's cache (which an attacker could leave stale to match). Nothing is written.
 */
export type SinceFailure =
  'bad_checkpoint' | 'unknown_key' | 'other_log' | 'log_shorter' | 'not_extended' | 'heads_differ';

export type SinceResult =
  | { ok: true; chain: VerifyResult & { ok: true }; from: number; to: number; root: string; consistency: string[] }
  | { ok: false; chain: VerifyResult | null; reason: SinceFailure | 'chain'; message: string };

export interface SinceOptions {
  onProgress?: (done: number, total: number) => void;
  /** Passed on to the chain walk (verify's default: the head the last start-up check verified). */
  expectHead?: ChainHead;
}

export function verifySince(
  db: Database,
  signed: SignedCheckpoint,
  { onProgress, expectHead }: SinceOptions = {},
): SinceResult {
  const body = signed.checkpoint.body;
  const unfit = checkpointProblem(db, signed);
  if (unfit) return { ok: false, chain: null, ...unfit };
  const tiles = new TileBuilder();
  const chain = verifyChain(db, {
    onProgress,
    expectHead,
    onRow: (row) => tiles.push(leafHash(Buffer.from(row.hash, 'hex'))),
  });
  const failed = (reason: SinceFailure | 'chain', message: string): SinceResult => ({
    ok: false,
    chain,
    reason,
    message,
  });
  if (!chain.ok)
    return failed(
      'chain',
      `the hash chain is broken at position ${chain.position}: ${chain.reason} (${chain.message})`,
    );
  const size = chain.head.position;
  if (size < body.treeSize)
    return failed(
      'log_shorter',
      `the checkpoint covers ${body.treeSize} events but the log has ${size}: events were removed`,
    );
  const tree = new LogTree(db, size, tiles);
  const root = tree.root();
  const proof = consistencyProof(tree, body.treeSize, size);
  if (!verifyConsistency(body.treeSize, size, Buffer.from(body.rootHash, 'hex'), root, proof)) {
    const then = new LogTree(db, body.treeSize, tiles).root().toString('hex');
    return failed(
      'not_extended',
      `today's log does not extend the checkpoint: its first ${body.treeSize} events have root ${then}, ` +
        `not the signed ${body.rootHash} — the log was rewritten (and re-hashed) before position ${body.treeSize + 1}`,
    );
  }
  const heads = new HeadsTree(streamHeads(db, body.treeSize, { fromLog: true }));
  if (heads.root().toString('hex') !== body.heads.root || heads.heads.length !== body.heads.count) {
    return failed('heads_differ', `the stream heads at ${body.treeSize} events are not the ones the checkpoint signed`);
  }
  return {
    ok: true,
    chain,
    from: body.treeSize,
    to: size,
    root: root.toString('hex'),
    consistency: proof.map((b) => b.toString('hex')),
  };
}

/** Before any walk: the checkpoint is signed, by a key this log had, and of this log. */
function checkpointProblem(db: Database, signed: SignedCheckpoint): { reason: SinceFailure; message: string } | null {
  const body = signed.checkpoint.body;
  const problem = signatureProblem(signed);
  if (problem) return { reason: 'bad_checkpoint', message: problem };
  if (!signingKeys(db).keys.some((k) => k.keyId === body.keyId))
    return {
      reason: 'unknown_key',
      message: `the checkpoint is signed by key ${body.keyId}, which this log never had`,
    };
  if (logId(db) !== body.logId)
    return {
      reason: 'other_log',
      message: `the checkpoint is of log ${body.logId}, but this log's first event hashes to ${logId(db) ?? '(empty log)'}: the log was replaced or rewritten from its start`,
    };
  return null;
}
