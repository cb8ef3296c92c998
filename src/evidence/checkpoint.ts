import type { Database } from 'better-sqlite3';
import { canonicalize } from '../canonical.js';
import { prepared } from '../engine/db.js';
import { CHAIN_BREAK_ACCEPTED, CHAIN_STREAM } from '../engine/anchor.js';
import { LogTree } from '../engine/merkle-store.js';
import { readHead } from '../engine/store.js';
import { fingerprint, publicKeyText, sign, verifySignature, type SigningKey } from '../signing-key.js';
import { HeadsTree, streamHeads } from './heads.js';

/**
 * Signed checkpoints (after RFC 9162's signed tree heads): Colony's signed statement that its
 * log of `treeSize` events has Merkle root `rootHash` and that its streams end where `heads` says. An
 * auditor who keeps one can later prove the log still extends it (`colony verify --since`), and a goal
 * bundle proves each of its events against one.
 *
 * The signature is Ed25519 over the UTF-8 bytes of the RFC 8785 canonical JSON of the body. The file form
 * (`colony checkpoint --json`, and the top of a bundle) is {checkpoint: {body, signature}, publicKey}.
 */
export interface CheckpointBody {
  format: 'colony-checkpoint';
  version: 1;
  /** The hash of the log's first event: which log this is. */
  logId: string;
  treeSize: number;
  rootHash: string;
  heads: { count: number; root: string };
  time: string;
  keyId: string;
}

export interface SignedCheckpoint {
  checkpoint: { body: CheckpointBody; signature: string };
  publicKey: string;
}

export type CheckpointReason = 'manual' | 'auto' | 'export';

export interface StoredCheckpoint extends SignedCheckpoint {
  n: number;
  reason: CheckpointReason;
}

/** What a checkpoint at the current head is made of; call inside one read transaction. */
export interface CheckpointParts {
  body: CheckpointBody;
  tree: LogTree;
  heads: HeadsTree;
}

export function logId(db: Database): string | null {
  return (prepared(db, 'SELECT hash FROM es_events WHERE position = 1').pluck().get() as string | undefined) ?? null;
}

/** The tree and heads at the log's size as this transaction sees it, and the body that states them. */
export function checkpointParts(
  db: Database,
  keyId: string,
  time: string,
  size = readHead(db).position,
): CheckpointParts {
  const id = logId(db);
  if (id === null || size === 0) throw new Error('the log is empty: there is nothing to checkpoint yet');
  const tree = new LogTree(db, size);
  const heads = new HeadsTree(streamHeads(db, size));
  const body: CheckpointBody = {
    format: 'colony-checkpoint',
    version: 1,
    logId: id,
    treeSize: size,
    rootHash: tree.root().toString('hex'),
    heads: { count: heads.heads.length, root: heads.root().toString('hex') },
    time,
    keyId,
  };
  return { body, tree, heads };
}

export function signBody(key: SigningKey, body: CheckpointBody): SignedCheckpoint {
  return { checkpoint: { body, signature: sign(key, canonicalize(body)) }, publicKey: publicKeyText(key) };
}

/** Null when the checkpoint is signed by the key it names; otherwise what is wrong. */
export function signatureProblem(signed: SignedCheckpoint): string | null {
  const publicKey = new Uint8Array(Buffer.from(signed.publicKey, 'base64'));
  if (fingerprint(publicKey) !== signed.checkpoint.body.keyId)
    return `the checkpoint names key ${signed.checkpoint.body.keyId} but carries key ${fingerprint(publicKey)}`;
  if (!verifySignature(publicKey, canonicalize(signed.checkpoint.body), signed.checkpoint.signature))
    return "the checkpoint's signature does not verify";
  return null;
}

export function storeCheckpoint(db: Database, signed: SignedCheckpoint, reason: CheckpointReason): StoredCheckpoint {
  const { body, signature } = signed.checkpoint;
  const n = prepared(
    db,
    `INSERT INTO es_checkpoints (tree_size, key_id, body, signature, public_key, reason) VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(body.treeSize, body.keyId, canonicalize(body), signature, signed.publicKey, reason).lastInsertRowid;
  return { ...signed, n: Number(n), reason };
}

interface CheckpointRow {
  n: number;
  body: string;
  signature: string;
  public_key: string;
  reason: CheckpointReason;
}
const fromRow = (r: CheckpointRow): StoredCheckpoint => ({
  n: r.n,
  reason: r.reason,
  publicKey: r.public_key,
  checkpoint: { body: JSON.parse(r.body) as CheckpointBody, signature: r.signature },
});

export function listCheckpoints(db: Database, limit = 50): StoredCheckpoint[] {
  return (
    prepared(db, 'SELECT n, body, signature, public_key, reason FROM es_checkpoints ORDER BY n DESC LIMIT ?').all(
      limit,
    ) as CheckpointRow[]
  ).map(fromRow);
}

/**
 * The checkpoint of the largest tree (the newest of those): a copy of an older signed row inserted behind
 * Colony's back gets a higher `n`, but never a larger tree, so it cannot stand in for the latest. After an
 * accepted chain break only checkpoints signed since count (the log they signed before is gone on purpose).
 */
export function latestCheckpoint(db: Database): StoredCheckpoint | null {
  const accepted = prepared(
    db,
    `SELECT recorded_at FROM es_events WHERE stream_id = ? AND type = ? ORDER BY version DESC LIMIT 1`,
  )
    .pluck()
    .get(CHAIN_STREAM, CHAIN_BREAK_ACCEPTED) as string | undefined;
  const row = prepared(
    db,
    `SELECT n, body, signature, public_key, reason FROM es_checkpoints WHERE json_extract(body, '$.time') >= ?
    ORDER BY tree_size DESC, n DESC LIMIT 1`,
  ).get(accepted ?? '') as CheckpointRow | undefined;
  return row ? fromRow(row) : null;
}
