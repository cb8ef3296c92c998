import { requestRun } from '../actions/runs.js';
import { runtimeSettings } from '../actions/runs/settings.js';
import type { App } from '../app.js';
import { GroupCommit } from '../engine/group-commit.js';
import { getRun, type RunRow } from '../projections/run-queries.js';
import type { RunStarter } from './reactor.js';
import { RunWaiters } from './run-waiters.js';

/**
 * execute_agent on a node that does not run its tenant's agents (another node leads the tenant,
 * runtime/cluster-node.ts): the run is queued in the log, exactly as the reactor queues it, and the
 * leader's reactor — which sees every node's commits — starts it; this node follows the run to its end
 * in its own copy of the log, which its follower keeps current. The caller cannot tell the difference,
 * except that a run waits for the leader's next look (at most its poll, 250 ms).
 */
export class LogRuns implements RunStarter {
  private readonly waiters = new RunWaiters();
  private readonly subscription;

  constructor(private readonly app: App) {
    this.subscription = app.engine.bus.events$.subscribe((e) => {
      if (e.type.startsWith('Run')) this.waiters.settle(app.engine.db, (e.data as { runId?: number }).runId);
    });
  }

  beginExecute(agentId: number, prompt: string, by: string): RunRow {
    // Not the calling tool's group commit: the run is the leader's to start, whatever this call does next.
    return GroupCommit.detached(() => {
      const outcome = requestRun(this.app, { agentId, source: 'execute_agent', prompt, by });
      return getRun(this.app.engine.db, outcome.run.runId)!;
    });
  }

  /** The run at its end, as the reactor's own awaitRun waits: at most twice its timeout, plus 30 s. */
  awaitRun(run: RunRow): Promise<RunRow> {
    if (run.status === 'refused') return Promise.resolve(run);
    const limit = (runtimeSettings(this.app.engine.db, run.agentId).timeoutSec * 2 + 30) * 1000;
    return Promise.race([
      this.waiters.whenDone(this.app.engine.db, run.runId),
      new Promise<RunRow>((resolve) => {
        setTimeout(() => resolve(getRun(this.app.engine.db, run.runId)!), limit).unref();
      }),
    ]);
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}
