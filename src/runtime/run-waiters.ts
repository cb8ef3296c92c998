import type { Database } from 'better-sqlite3';
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

  /** Resolves the run's waiters if the run has ended. */
  settle(db: Database, runId: number | undefined): void {
    if (runId === undefined) return;
    const run = getRun(db, runId);
    if (!run || !ENDED.has(run.status)) return;
    for (const resolve of this.waiting.get(runId) ?? []) resolve(run);
    this.waiting.delete(runId);
  }
}
