import { describeHolder, handoverRequester, liveHolder, tryLock, type DataLock } from './data-lock.js';
import type { Jobs } from './serve-jobs.js';

/**
 * The background jobs of a `colony stdio` on the SQLite store (command verifiers, the lease sweeper).
 * Any number of stdio processes serve one data dir — each MCP client starts its own, for its own
 * principal — beside a `colony serve`; only the holder of the data dir's lock (data-lock.ts) runs the
 * jobs, for every process, since it sees their commits in the log. A stdio takes the lock when it is
 * free: at start, or later when its holder ended. It hands the lock to a `colony serve` that asks
 * (serve-claim.ts), because serve runs agents, which stdio cannot; it goes on serving its client.
 */
const TICK_MS = 250;

export async function holdOrFollow(
  dataDir: string,
  start: () => Promise<Jobs>,
  say: (line: string) => void,
): Promise<Jobs> {
  let lock: DataLock | null = null;
  let jobs: Jobs | null = null;
  let stopped = false;
  let busy = false;
  const stepDown = () => {
    jobs?.stop(); // a verifier killed so gives no verdict: the next holder runs it again
    jobs = null;
    lock?.release();
    lock = null;
  };
  const lead = async (): Promise<boolean> => {
    lock = tryLock(dataDir, 'stdio');
    if (!lock) return false;
    try {
      jobs = await start();
    } catch (e) {
      stepDown();
      throw e;
    }
    if (stopped) stepDown();
    return true;
  };
  const tick = async () => {
    const requester = handoverRequester(dataDir);
    if (lock && requester !== null) {
      stepDown();
      say(`handed the jobs of ${dataDir} to colony serve (pid ${requester}); this process serves MCP only`);
    } else if (!lock && requester === null && (await lead()))
      say(`this process now runs the jobs of ${dataDir} (command verifiers, lease sweeper)`);
  };
  if (!(await lead()))
    say(
      `${describeHolder(liveHolder(dataDir))} runs the jobs of ${dataDir}; this process serves MCP only (and takes them over if that one ends)`,
    );
  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    tick()
      .catch((e: Error) => say(`could not take over the jobs of ${dataDir}: ${e.message}`))
      .finally(() => (busy = false));
  }, TICK_MS);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      stepDown();
    },
    problem: () => null, // the SQLite store: nothing to follow
  };
}
