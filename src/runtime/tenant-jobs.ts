import { expireLeasesUnit } from '../actions/tasks.js';
import { systemClock, type Clock } from '../clock.js';
import { TenantLeadership } from '../engine/pg/leadership.js';
import type { PgEventStore } from '../engine/pg/store.js';
import { log } from '../log.js';
import { SWEEP_INTERVAL_MS } from './leases.js';

/**
 * The background jobs of the tenants this node leads on a PostgreSQL store: pg/leadership.ts elects one
 * node per tenant, and only that node runs the tenant's jobs — here the lease sweeper, each sweep a unit
 * of work (actions/tasks.ts expireLeasesUnit) in one transaction under the tenant's lock. When the node
 * dies its locks end with its connection and another node gains the tenant on its next round; a sweep
 * a cut-off node still runs is harmless, since a claim expires at most once (ExpireClaim decides on the
 * task's stream). The reactor, verifiers, probe expiry and checkpoints join here as their actions become
 * units.
 */
export interface TenantJobsOptions {
  /** Between two sweeps of a tenant (default 15 s, as on SQLite). */
  sweepMs?: number;
  /** Between two leadership rounds (default 1 s). */
  leadershipMs?: number;
  clock?: Clock;
  /** For operators and tests: what each sweep expired, and leadership changes. */
  onSwept?(tenant: string, taskIds: number[]): void;
  onGain?(tenant: string): void;
  onLose?(tenant: string): void;
}

export class TenantJobs {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<string>();
  private leadership: TenantLeadership | null = null;

  private constructor(
    private readonly store: PgEventStore,
    private readonly options: TenantJobsOptions,
  ) {}

  static async start(store: PgEventStore, options: TenantJobsOptions = {}): Promise<TenantJobs> {
    const jobs = new TenantJobs(store, options);
    jobs.leadership = await TenantLeadership.start(store.target, {
      tenants: () => store.tenants(),
      onGain: (tenant) => jobs.gain(tenant),
      onLose: (tenant) => jobs.lose(tenant),
      intervalMs: options.leadershipMs,
    });
    return jobs;
  }

  /** One sweep of the tenant's expired leases now: the tasks it expired. */
  async sweep(tenant: string): Promise<number[]> {
    if (this.running.has(tenant)) return []; // the previous sweep is still at it
    this.running.add(tenant);
    try {
      const now = (this.options.clock ?? systemClock)().toISOString();
      const { value } = await this.store.unit(tenant, { actor: 'system' }, () => expireLeasesUnit(now));
      if (value?.length) this.options.onSwept?.(tenant, value);
      return value ?? [];
    } catch (err) {
      log.error({ err, tenant }, 'lease sweep failed');
      return [];
    } finally {
      this.running.delete(tenant);
    }
  }

  async stop(): Promise<void> {
    await this.leadership?.stop();
    for (const tenant of [...this.timers.keys()]) this.lose(tenant);
  }

  private gain(tenant: string): void {
    this.options.onGain?.(tenant);
    void this.sweep(tenant);
    const timer = setInterval(() => void this.sweep(tenant), this.options.sweepMs ?? SWEEP_INTERVAL_MS);
    timer.unref();
    this.timers.set(tenant, timer);
  }

  private lose(tenant: string): void {
    clearInterval(this.timers.get(tenant));
    if (this.timers.delete(tenant)) this.options.onLose?.(tenant);
  }
}
