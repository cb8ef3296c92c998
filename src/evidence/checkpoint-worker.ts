import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, type Durability } from '../engine/db.js';
import { currentSigningKeyId } from '../events/signing-keys.js';
import { resolveSigningKey } from '../signing-key.js';
import type { SignedCheckpoint } from './checkpoint.js';
import { prepareCheckpointOn, signCheckpointOn } from './sign.js';

/**
 * The thread `serve` signs its automatic checkpoints on (auto-checkpoint.ts): its own connection, so the
 * O(streams) work of a checkpoint — the stream heads and their tree — never stalls the event loop that
 * serves commands. WAL lets it read one moment of the log while commands commit; its writes (the tree
 * cache, the checkpoint row) are short transactions. It only signs with a key the log has already adopted.
 */
export interface SignRequest {
  time: string;
}
export type SignReply =
  | { ok: true; n: number; treeSize: number; rootHash: string; keyId: string; reused: boolean }
  /** `keep: false`: the checkpoint signed but not stored (null: the latest already says it). */
  | { ok: true; prepared: SignedCheckpoint | null }
  | { ok: false; message: string };

export interface SignerData {
  file: string;
  dataDir: string;
  durability: Durability;
  /**
   * False on a node's copy of a PostgreSQL tenant: a checkpoint stands there only once the store keeps it
   * too, which the node does on its main thread (copy-checkpoint.ts); this thread does the O(streams) part.
   */
  keep: boolean;
}

const { file, dataDir, durability, keep } = workerData as SignerData;
const db = openDatabase(file, { durability });

parentPort!.on('message', ({ time }: SignRequest) => {
  let reply: SignReply;
  try {
    const current = currentSigningKeyId(db);
    if (current === null) throw new Error('the log has adopted no signing key yet');
    const key = resolveSigningKey(dataDir, current);
    if (!keep) reply = { ok: true, prepared: prepareCheckpointOn(db, key, time) };
    else {
      const { checkpoint, reused } = signCheckpointOn(db, key, time, 'auto');
      const b = checkpoint.checkpoint.body;
      reply = { ok: true, n: checkpoint.n, treeSize: b.treeSize, rootHash: b.rootHash, keyId: b.keyId, reused };
    }
  } catch (e) {
    reply = { ok: false, message: (e as Error).message };
  }
  parentPort!.postMessage(reply);
});
