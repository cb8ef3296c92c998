import type { Engine } from '../engine/engine.js';
import { pgTarget } from '../engine/pg/target.js';
import { ReplicaFollower } from '../engine/pg/follower.js';
import { TenantLeadership } from '../engine/pg/leadership.js';
import type { Failing } from '../engine/pg/repeated-failure.js';
import { isDomainError } from '../errors.js';
import { log } from '../log.js';
import type { Runtime } from './index.js';

/**
 * A `colony serve` node of a tenant on a PostgreSQL store. Any number of nodes serve the tenant at once:
 * each keeps its copy current with every node's commits (pg/follower.ts), and exactly one — the holder of
 * the tenant's leadership lock (pg/leadership.ts) — runs its background jobs: the reactor (agent runs),
 * the lease sweeper, command verifiers, the activity log and auto-approval. When the leader dies (even
 * kill -9) its lock ends with its connection, and the next node to take it starts the jobs, whose start
 * marks the runs the dead node left running as failed and starts the queued ones (runtime/reactor.ts).
 */
export interface ClusterNodeOptions {
  /** Starts the jobs on this node (it just became the leader). */
  start(): Runtime;
  /** The jobs this node runs now: a runtime while it leads, null otherwise. */
  onChange(runtime: Runtime | null): void;
  leadershipMs?: number;
  pollMs?: number;
}

export class ClusterNode {
  private runtime: Runtime | null = null;
  private follower: ReplicaFollower | null = null;
  private leadership: TenantLeadership | null = null;

  private constructor(
    private readonly engine: Engine,
    private readonly options: ClusterNodeOptions,
  ) {}

  static async join(engine: Engine, store: { url: string; tenant: string }, options: ClusterNodeOptions) {
    const node = new ClusterNode(engine, options);
    node.follower = await ReplicaFollower.start(store.url, store.tenant, engine, {
      pollMs: options.pollMs,
      onError: followFailed,
      onRecovered: ({ since, attempts }) =>
        log.info({ since, attempts }, 'bringing in other nodes’ events again after failed attempts'),
    });
    try {
      node.leadership = await TenantLeadership.start(pgTarget(store.url), {
        tenants: () => [store.tenant],
        onGain: () => node.gain(store.tenant),
        onLose: () => node.lose(store.tenant),
        intervalMs: options.leadershipMs,
      });
    } catch (e) {
      await node.follower.stop();
      throw e;
    }
    return node;
  }

  /** Bringing in other nodes' events fails now (null while it works): GET /health says so. */
  followFailing() {
    return this.follower?.failing() ?? null;
  }

  /** Stops the jobs at once (before the engine closes), then leaves the election and stops following. */
  async stop(): Promise<void> {
    this.lose('');
    await this.follower?.stop();
    await this.leadership?.stop();
  }

  private gain(tenant: string): void {
    if (this.runtime) return;
    // What the last leader committed is in before the reactor looks for runs it left running.
    this.engine.catchUp();
    this.runtime = this.options.start();
    this.options.onChange(this.runtime);
    log.info({ tenant }, 'this node now runs the tenant’s background jobs');
  }

  private lose(tenant: string): void {
    const runtime = this.runtime;
    if (!runtime) return;
    this.runtime = null;
    this.options.onChange(null);
    runtime.stop();
    if (tenant) log.warn({ tenant }, 'this node no longer runs the tenant’s background jobs');
  }
}

/**
 * Once when it starts, then a reminder every few minutes (pg/repeated-failure.ts). A store away is a
 * warning (it comes back, the poll goes on); a refusal (ErrChainBroken: rows removed from the store;
 * ErrChainMismatch: the store's chain is not the copy's) is an error — no retry mends it, a person
 * must — and this node serves what it had until then.
 */
function followFailed(err: unknown, { since, attempts, reminder }: Failing & { reminder: boolean }): void {
  const damaged = isDomainError(err) && (err.code === 'ErrChainBroken' || err.code === 'ErrChainMismatch');
  const what = damaged
    ? 'cannot bring in other nodes’ events: the store refuses them; this node serves its copy as it was'
    : 'could not bring in other nodes’ events; trying again';
  const line = reminder ? `${what} (still, since ${since.toISOString()}: ${attempts} attempts)` : what;
  if (damaged) log.error({ err, since, attempts }, line);
  else log.warn({ err, since, attempts }, line);
}
