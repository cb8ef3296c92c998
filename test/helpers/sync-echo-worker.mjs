// A worker for test/engine/sync-worker.test.ts, speaking SyncWorker's protocol (src/engine/pg/sync-worker.ts):
// `init` answers the worker's thread id, `echo` answers its argument, `sleep` answers after ms, `fail` throws a coded error.
import { setTimeout } from 'node:timers';
import { threadId, workerData } from 'node:worker_threads';

const { port, flag } = workerData;
const signal = new Int32Array(flag);
const ops = {
  init: async () => threadId,
  echo: async (args) => args,
  sleep: async (ms) => new Promise((resolve) => setTimeout(() => resolve('slept'), ms)),
  fail: async (code) => {
    throw Object.assign(new Error(`failed with ${code}`), { code });
  },
};
port.on('message', ({ id, op, args }) => {
  ops[op](args).then(
    (value) => reply({ id, value }),
    (e) => reply({ id, error: { message: e.message, code: e.code } }),
  );
});
function reply(message) {
  port.postMessage(message);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
}
