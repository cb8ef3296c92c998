import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SyncWorker } from '../../src/engine/pg/sync-worker.js';
import { isDomainError } from '../../src/errors.js';

/** Synchronous calls into a worker thread (the PostgreSQL primary's transport): answers, errors, a stuck worker. */
const ENTRY = new URL('../helpers/sync-echo-worker.mjs', import.meta.url);

describe('SyncWorker', () => {
  it('answers each call synchronously, in turn, and carries a coded error back as a DomainError', async () => {
    const worker = new SyncWorker(ENTRY, { op: 'init', args: null });
    try {
      assert.deepEqual(worker.call('echo', { a: [1, 'two'] }), { a: [1, 'two'] });
      assert.equal(worker.call('sleep', 20), 'slept', 'the caller blocked until the worker answered');
      assert.throws(
        () => worker.call('fail', 'ErrBusy'),
        (e) => isDomainError(e) && e.code === 'ErrBusy' && /failed with ErrBusy/.test(e.message),
      );
      assert.equal(worker.call('echo', 3), 3, 'a failed call leaves the worker usable');
    } finally {
      await worker.close();
    }
  });

  it('gives up on a call that takes too long, ending that worker, and starts a new one for the next call', async () => {
    const worker = new SyncWorker(ENTRY, { op: 'init', args: null }, 200);
    try {
      const first = worker.call<number>('init');
      assert.throws(
        () => worker.call('sleep', 2000),
        (e) =>
          isDomainError(e) && e.code === 'ErrStoreUnavailable' && /did not answer sleep within 0.2 s/.test(e.message),
      );
      assert.equal(
        worker.call('echo', 'again'),
        'again',
        'the late answer of the stuck call is never taken for this one',
      );
      assert.notEqual(worker.call<number>('init'), first, 'a new worker thread answers');
    } finally {
      await worker.close();
    }
  });
});
