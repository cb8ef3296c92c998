import type { App, AppOptions } from '../app.js';
import { isDomainError } from '../errors.js';
import type { NodeProblem } from '../mcp/context.js';
import type { Runtime } from '../runtime/index.js';
import type { RunStarter } from '../runtime/reactor.js';

export interface Jobs {
  stop(): void;
  /** What keeps this node from serving current data (GET /health), null when nothing does. */
  problem(): NodeProblem | null;
}

/**
 * The background jobs (reactor, sweeper, verifiers…) and automatic checkpoints: here, on the SQLite store;
 * on a PostgreSQL store only while this node leads its tenant (runtime/cluster-node.ts).
 */
export async function startJobs(
  app: App,
  store: AppOptions['store'],
  mcp: { runtime: { reactor: RunStarter | null } },
  startRuntime: () => Runtime,
  startCheckpoints: () => { stop(): Promise<void> },
): Promise<Jobs> {
  if (store) {
    const [{ ClusterNode }, { LogRuns }] = await Promise.all([
      import('../runtime/cluster-node.js'),
      import('../runtime/log-runs.js'),
    ]);
    // While another node leads, execute_agent queues the run for the leader and follows it in the log.
    const followed = new LogRuns(app);
    mcp.runtime.reactor = followed;
    // The leader signs the tenant's automatic checkpoints too (kept in the store, evidence/sign.ts).
    const lead = (): Runtime => {
      const runtime = startRuntime();
      const checkpoints = startCheckpoints();
      return {
        ...runtime,
        stop: () => {
          runtime.stop();
          void checkpoints.stop();
        },
      };
    };
    const node = await ClusterNode.join(app.engine, store, {
      start: lead,
      onChange: (r) => (mcp.runtime.reactor = r?.reactor ?? followed),
    });
    return {
      stop: () => {
        followed.stop();
        void node.stop();
      },
      problem: () => {
        const f = node.followFailing();
        if (!f) return null;
        const code = isDomainError(f.error) ? f.error.code : 'ErrInternal';
        const reason =
          'this node cannot bring in other nodes’ events from the store: what it shows may be behind, and its writes may fail';
        return { kind: 'follow', reason, code, since: f.since, attempts: f.attempts };
      },
    };
  }
  const runtime = startRuntime();
  mcp.runtime.reactor = runtime.reactor;
  const checkpoints = startCheckpoints();
  return {
    stop: () => {
      runtime.stop();
      void checkpoints.stop();
    },
    problem: () => null,
  };
}
