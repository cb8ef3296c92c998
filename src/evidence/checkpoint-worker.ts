import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, type Durability } from '../engine/db.js';
import { currentSigningKeyId } from '../events/signing-keys.js';
import { resolveSigningKey } from '../signing-key.js';
import { signCheckpointOn } from './sign.js';

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
  | { ok: false; message: string };

const { file, dataDir, durability } = workerData as { file: string; dataDir: string; durability: Durability };
const db = openDatabase(file, { durability });

parentPort!.on('message', ({ time }: SignRequest) => {
  let reply: SignReply;
  try {
    const current = currentSigningKeyId(db);
    if (current === null) throw new Error('the log has adopted no signing key yet');
    const { checkpoint, reused } = signCheckpointOn(db, resolveSigningKey(dataDir, current), time, 'auto');
    const b = checkpoint.checkpoint.body;
    reply = { ok: true, n: checkpoint.n, treeSize: b.treeSize, rootHash: b.rootHash, keyId: b.keyId, reused };
  } catch (e) {
    reply = { ok: false, message: (e as Error).message };
  }
  parentPort!.postMessage(reply);
});
