import assert from 'node:assert/strict';
import { createPublicChannel } from '../../src/actions/channels.js';
import type { App } from '../../src/app.js';
import { SyncFailedError } from '../../src/engine/wal-sync.js';

/**
 * Makes the disk refuse a sync, as a failing disk would (src/engine/wal-sync.ts), in an app whose engine a
 * server serves (createHttpApp turned the deferral on): two commands arrive together so that the next batch
 * leaves its sync to the thread pool, then the WAL's descriptor is swapped for one that does not exist and
 * the real fdatasync fails (EBADF). Everything else runs as `colony serve` runs it. Resolves once the
 * failed batch's callers were answered ErrSyncFailed; the returned function puts the real descriptor back
 * (for closing: writes stay stopped).
 */
export async function failSync(app: App): Promise<() => void> {
  const channel = (name: string) =>
    app.engine.group.run(async () => createPublicChannel(app, 1, name, 'test', { actor: 'user:owner' }));
  await Promise.all([channel('warm-1'), channel('warm-2')]); // together: the next batch is deferred
  const wal = app.engine.group.wal as unknown as { fd: number | null };
  const batch = [channel('lost-1'), channel('lost-2')];
  const real = wal.fd; // opened by the deferred batch
  assert.notEqual(real, null, 'the batch under load left its sync to the pool');
  wal.fd = 2 ** 30; // no such descriptor
  for (const c of batch) await assert.rejects(c, SyncFailedError);
  return () => void (wal.fd = real);
}
