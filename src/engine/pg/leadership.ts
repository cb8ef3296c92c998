import type pg from 'pg';
import { openClient } from './connect.js';
import type { PgTarget } from './target.js';

export interface LeadershipOptions {
  /** The tenants whose background jobs this node may run (asked again on every round). */
  tenants(): Promise<readonly string[]> | readonly string[];
  /** This node now runs the tenant's jobs (reactor, lease sweeper, verifiers, probe expiry, checkpoints). */
  onGain(tenant: string): void;
  /** It no longer does: its lock went with its connection. Stop the jobs before anything else. */
  onLose(tenant: string): void;
  /** How often a follower asks again, and a leader checks that its connection is alive (default 1 s). */
  intervalMs?: number;
}

/**
 * One node per tenant runs the tenant's background jobs: the one that holds the tenant's session-level
 * advisory lock. A lock lives exactly as long as the connection that took it, so when a node dies (even
 * kill -9) PostgreSQL ends its session, the lock is free, and another node's next round takes it — a
 * takeover within about `intervalMs`. No lease table, no clock to trust. What a job writes still goes
 * through appends with expected versions, so a node cut off but not yet aware of it cannot write a
 * decision twice.
 */
export class TenantLeadership {
  private client: pg.Client | null = null;
  private readonly led = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> = Promise.resolve();
  private stopped = false;

  private constructor(
    private readonly target: PgTarget,
    private readonly options: LeadershipOptions,
  ) {}

  /** Starts competing; the first round has run when this resolves. */
  static async start(target: PgTarget, options: LeadershipOptions): Promise<TenantLeadership> {
    const leadership = new TenantLeadership(target, options);
    await leadership.tick();
    leadership.timer = setInterval(() => void leadership.tick(), options.intervalMs ?? 1000);
    leadership.timer.unref();
    return leadership;
  }

  /** Releases every lock (by ending the session) after telling the jobs to stop. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.round;
    this.loseAll();
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private tick(): Promise<void> {
    this.round = this.round.then(() => this.compete()).catch(() => this.disconnected());
    return this.round;
  }

  private async compete(): Promise<void> {
    if (this.stopped) return;
    const client = this.client ?? (await this.connect());
    await client.query('SELECT 1'); // a leader learns here that its session, and so its locks, are gone
    for (const tenant of await this.options.tenants()) {
      if (this.led.has(tenant) || this.stopped) continue;
      const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [
        `colony:jobs:${this.target.schema}:${tenant}`,
      ]);
      if (got.rows[0]!.ok) {
        this.led.add(tenant);
        this.options.onGain(tenant);
      }
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = await openClient(this.target);
    client.on('error', () => this.disconnected());
    this.client = client;
    return client;
  }

  private disconnected(): void {
    const client = this.client;
    this.client = null;
    this.loseAll();
    client?.end().catch(() => undefined);
  }

  private loseAll(): void {
    for (const tenant of [...this.led]) {
      this.led.delete(tenant);
      this.options.onLose(tenant);
    }
  }
}
