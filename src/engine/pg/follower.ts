import type pg from 'pg';
import type { Engine } from '../engine.js';
import { openClient } from './connect.js';
import { RepeatedFailure, type FailureReports } from './repeated-failure.js';
import { pgTarget } from './target.js';

/**
 * onError: bringing rows in failed (the store away, or lost rows: ErrChainBroken) and the next wake-up
 * tries again — told when it starts and every `remindMs` (default 5 min) while the same failure goes on
 * (pg/repeated-failure.ts); onRecovered: rows came in again.
 */
export interface FollowerOptions extends FailureReports {
  /** Reads anyway this often (default 1 s): a NOTIFY is a wake-up that a lost connection misses. */
  pollMs?: number;
  remindMs?: number;
  /** The clock the reminders follow (tests set it). */
  now?: () => number;
}

/**
 * Keeps a node's copy of its tenant (engine/replica.ts) current with what other nodes commit, so the
 * SSE stream, MCP subscriptions, the reactor and every read see every node's writes within moments:
 * LISTEN wakes it when any node appends to the tenant (the append's NOTIFY carries the tenant), a poll
 * covers a lost connection, and `engine.catchUp` fetches the rows after the copy's head in chain order —
 * a tenant's rows commit in that order under its chain lock, so nothing is skipped — and publishes them
 * on the bus, as this node's own commits are.
 */
export class ReplicaFollower {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | undefined;
  private scheduled = false;
  private stopped = false;
  private readonly failure: RepeatedFailure;

  private constructor(
    private readonly url: string,
    private readonly tenant: string,
    private readonly engine: Engine,
    private readonly options: FollowerOptions,
  ) {
    this.failure = new RepeatedFailure(options, options.now, options.remindMs);
  }

  static async start(url: string, tenant: string, engine: Engine, options: FollowerOptions = {}) {
    const follower = new ReplicaFollower(url, tenant, engine, options);
    await follower.listen();
    follower.timer = setInterval(() => follower.wake(), options.pollMs ?? 1000);
    follower.timer.unref();
    follower.wake();
    return follower;
  }

  /** Brings rows in on the next turn of the event loop; wake-ups in between fold into one. */
  wake(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.stopped || !this.engine.db.open) return;
      try {
        this.engine.catchUp();
      } catch (e) {
        return this.failure.failed(e);
      }
      this.failure.succeeded();
    });
  }

  /** Listens again a second from now, and again after that until it works (the poll covers the gap). */
  private relisten(): void {
    if (this.stopped) return;
    setTimeout(() => void this.listen().catch(() => this.relisten()), 1000).unref();
  }

  /** Bringing rows in fails now: since when, how often, the last error (null while it works). */
  failing() {
    return this.failure.current();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = await openClient(pgTarget(this.url));
    if (this.stopped) return void client.end().catch(() => undefined);
    client.on('notification', (n) => {
      if (n.payload === this.tenant) this.wake();
    });
    // A lost connection is found again later; meanwhile the poll alone keeps the copy current.
    client.on('error', () => {
      this.client = null;
      this.relisten();
    });
    try {
      await client.query('LISTEN colony_events');
    } catch (e) {
      await client.end().catch(() => undefined);
      throw e;
    }
    this.client = client;
  }
}
