import type { Engine } from '../engine/engine.js';
import { LogTree } from '../engine/merkle-store.js';
import { latestCheckpoint, type SignedCheckpoint, type StoredCheckpoint } from './checkpoint.js';
import { extendsLatest, keepCheckpoint } from './sign.js';

/**
 * Keeps, on a node's copy of a PostgreSQL tenant, a checkpoint its checkpoint worker prepared on the copy's
 * file (checkpoint-worker.ts, `keep: false`): the worker did the O(streams) part off the event loop; here,
 * on the engine's connection, it is stored in the copy and in the store in one local transaction
 * (keepCheckpoint). Another node may have signed meanwhile (brought in first): a checkpoint that says no
 * more than the latest is dropped, and one that does must still extend it — Colony never keeps a
 * statement it has not checked. Null when nothing was kept.
 */
export function keepPrepared(engine: Engine, signed: SignedCheckpoint): StoredCheckpoint | null {
  engine.catchUp();
  const body = signed.checkpoint.body;
  const latest = latestCheckpoint(engine.db)?.checkpoint.body;
  if (latest && latest.treeSize >= body.treeSize) return null;
  const problem = engine.db.transaction(() =>
    extendsLatest(engine.db, { body, tree: new LogTree(engine.db, body.treeSize) }),
  )();
  if (problem) throw new Error(`refusing to keep the checkpoint: ${problem}; run "colony verify --store …"`);
  return keepCheckpoint(engine, signed, 'auto');
}
