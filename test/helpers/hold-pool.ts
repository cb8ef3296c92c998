import { pbkdf2 } from 'node:crypto';

/**
 * Occupies every thread of libuv's pool for a while, as a slow disk would hold a WAL sync
 * (src/engine/wal-sync.ts): a sync queued now waits until these jobs end. `iterations` sets how long
 * (3,000,000: ~0.3 s per job on these machines).
 */
export function holdThePool(iterations: number): Promise<unknown> {
  const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const job = () => new Promise((resolve) => pbkdf2('pool', 'busy', iterations, 32, 'sha256', resolve));
  return Promise.all(Array.from({ length: threads }, job));
}
