import type { Database } from 'better-sqlite3';
import { runtimeSettings } from '../actions/runs/settings.js';
import { getRun, type RunRow } from '../projections/run-queries.js';

const ENDED = new Set(['succeeded', 'failed', 'timed_out', 'refused']);

/** Who waits for which run to end; the reactor settles them as the log says runs ended. */
export class RunWaiters {
  private readonly waiting = new Map<number, ((run: RunRow) => void)[]>();

  /** Resolves with the run once it has ended (finished, failed, timed out or refused). */
  whenDone(db: Database, runId: number): Promise<RunRow> {
    const run = getRun(db, runId);
    if (run && ENDED.has(run.status)) return Promise.resolve(run);
    return new Promise((resolve) => this.waiting.set(runId, [...(this.waiting.get(runId) ?? []), resolve]));
  }

  /** A run at its end, waited for at most twice its timeout plus 30 s (then as it is); a refused one at once. */
  async awaitRun(db: Database, run: RunRow): Promise<RunRow> {
    if (run.status === 'refused') return run;
    const limit = (runtimeSettings(db, run.agentId).timeoutSec * 2 + 30) * 1000;
    return Promise.race([
      this.whenDone(db, run.runId),
      new Promise<RunRow>((resolve) => {
        setTimeout(() => resolve(getRun(db, run.runId)!), limit).unref();
      }),
    ]);
  }

  /** Resolves the run's waiters if the run has ended. */
  settle(db: Database, runId: number | undefined): void {
    if (runId === undefined) return;
    const run = getRun(db, runId);
    if (!run || !ENDED.has(run.status)) return;
    for (const resolve of this.waiting.get(runId) ?? []) resolve(run);
    this.waiting.delete(runId);
  }
}
