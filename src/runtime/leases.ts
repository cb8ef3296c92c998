import { expireLeases } from '../actions/tasks.js';
import type { App } from '../app.js';
import { log } from '../log.js';

/**
 * The lease sweeper: every interval, each claim whose lease ran out is expired
 * (ClaimExpired, a message in the goal channel) and the task is claimable again. A claim attempt on an
 * expired lease does the same on its own, so the sweep only makes the pool visible sooner.
 */
export const SWEEP_INTERVAL_MS = 15_000;

export class LeaseSweeper {
  private timer: NodeJS.Timeout | null = null;
  constructor(
    private readonly app: App,
    private readonly intervalMs = SWEEP_INTERVAL_MS,
  ) {}

  start(): this {
    this.sweep();
    this.timer = setInterval(() => this.sweep(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  sweep(): number[] {
    try {
      return expireLeases(this.app);
    } catch (err) {
      log.error({ err }, 'lease sweep failed');
      return [];
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
