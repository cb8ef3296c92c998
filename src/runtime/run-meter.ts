import type { App } from '../app.js';
import { recordStreamedSpend, type Headroom, type RunStop } from '../actions/runs/spend.js';
import type { Amount } from '../events/tasks.js';
import { log } from '../log.js';
import { cliSessionTokens } from '../projections/cli-session-queries.js';
import type { RunRow } from '../projections/run-queries.js';
import type { UsageMeter, UsageSoFar } from './adapters/types.js';
import type { JsonObject } from './adapters/jsonl.js';
import type { ProcessControl } from './harness.js';
import { priceOf } from './rate-card.js';

/**
 * Spend enforced while a run goes on. The meter reads the process's stdout as it comes, one JSON line at a
 * time, through the runtime's usage meter (adapters/); what the run used since the last record is recorded
 * as CostRecorded with the run at most once a second (actions/runs/spend.ts), and at once when it would
 * use up what the budgets leave (their headroom, learnt at the last record). When a record says a budget is
 * reached — the goal's spend plus open reservations at its budget, a task's, or the agent's tokens for the
 * day — the process is stopped: SIGTERM, SIGKILL after a short grace (money is being spent while it waits).
 * Usage without a price (a subscription, a model the rate card lacks) is recorded as tokens, never as free.
 */
export const RECORD_EVERY_MS = 1000;
/** The grace between SIGTERM and SIGKILL when a budget stops a run (the timeout's is 15 s). */
export const BUDGET_GRACE_MS = Number(process.env.COLONY_BUDGET_STOP_GRACE_MS ?? 500);
/** A line longer than this is not a usage line: it is skipped, not buffered. */
const MAX_LINE = 4 * 1024 * 1024;

/** How the meter ended: what it recorded while the run went on, and the budget that stopped it, if one did. */
export type MeterEnd = { streamed: Amount } & Partial<RunStop>;

/** A run a budget stopped failed for that, whatever its exit; what was streamed is not recorded twice. */
export const stoppedBy = (stop: MeterEnd) =>
  stop.cause
    ? {
        status: 'failed' as const,
        cause: stop.cause,
        reason: `stopped by Colony: ${stop.reason}`,
        streamed: stop.streamed,
      }
    : { streamed: stop.streamed };

export class RunMeter {
  /** What was recorded while the run went on. */
  readonly recorded: Amount = { tokens: 0, cents: 0 };
  stopped: RunStop | null = null;
  /** performance.now() when the record that found a budget reached began (the bench times the stop from it). */
  stoppedAt: number | null = null;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private lastRecord = 0;
  private timer: NodeJS.Timeout | null = null;
  private headroom: Headroom = { tokens: Infinity, cents: Infinity };
  private control: ProcessControl | null = null;
  private ended = false;
  /** A JSON line came since the last look (only then can the usage have changed). */
  private fresh = false;

  constructor(
    private readonly app: App,
    private readonly run: RunRow,
    private readonly usage: UsageMeter,
    private readonly model: string,
    private readonly graceMs = BUDGET_GRACE_MS,
  ) {}

  /** For the harness's `watch`, beside another watcher (the sandbox's): the meter may stop the process it measures. */
  watchWith(other?: (control: ProcessControl) => () => void): (control: ProcessControl) => () => void {
    return (control) => {
      this.control = control;
      const unwatch = other?.(control);
      return () => {
        unwatch?.();
        this.end();
      };
    };
  }

  /** What it recorded, and the budget that stopped the run if one did. */
  outcome(): MeterEnd {
    return { streamed: { ...this.recorded }, ...(this.stopped ?? {}) };
  }

  chunk(buf: Buffer): void {
    if (this.ended) return;
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
      this.partial.push(buf.subarray(start, nl));
      this.line(Buffer.concat(this.partial));
      this.partial = [];
      this.partialBytes = 0;
      start = nl + 1;
    }
    if (start < buf.length && this.partialBytes + buf.length - start <= MAX_LINE) {
      this.partial.push(buf.subarray(start));
      this.partialBytes += buf.length - start;
    }
    this.schedule();
  }

  /** The process ended: nothing more is recorded by the meter (its end records the rest). */
  end(): void {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private line(raw: Buffer): void {
    const text = raw.toString('utf8').trim();
    if (!text.startsWith('{')) return;
    try {
      const v: unknown = JSON.parse(text);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        this.usage.line(v as JsonObject);
        this.fresh = true;
      }
    } catch {
      /* not JSON: a banner, a warning */
    }
  }

  /** Records now when the unrecorded usage would use up the headroom or a second has passed; else once it has. */
  private schedule(): void {
    if (this.stopped || this.ended || !this.fresh) return;
    this.fresh = false;
    const due = this.unrecorded();
    if (due.tokens === 0 && due.cents === 0) return;
    const wait = this.lastRecord + RECORD_EVERY_MS - performance.now();
    if (wait <= 0 || due.tokens >= this.headroom.tokens || due.cents >= this.headroom.cents) return this.record();
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.record();
    }, wait);
  }

  private record(): void {
    if (this.stopped || this.ended || !this.app.engine.db.open) return;
    const began = (this.lastRecord = performance.now());
    const total = this.total();
    const due = { tokens: total.tokens - this.recorded.tokens, cents: total.cents - this.recorded.cents };
    try {
      const m = recordStreamedSpend(this.app, this.run.runId, due, total);
      if (!m) return this.end();
      this.recorded.tokens = total.tokens;
      this.recorded.cents = total.cents;
      this.headroom = m.headroom;
      if (m.stop) this.stop(m.stop, began);
    } catch (err) {
      log.warn({ err, runId: this.run.runId }, 'streamed usage not recorded');
    }
  }

  private stop(why: RunStop, began: number): void {
    this.stopped = why;
    this.stoppedAt = began;
    this.control?.stop(`stopped: ${why.reason}`, this.graceMs);
  }

  private unrecorded(): Amount {
    const t = this.total();
    return { tokens: Math.max(0, t.tokens - this.recorded.tokens), cents: Math.max(0, t.cents - this.recorded.cents) };
  }

  /** The run's usage so far as tokens and whole cents (rounded up); unpriced usage is tokens only. */
  private total(): Amount {
    const u = this.ownUsage();
    const usd = u.costUsd ?? priceOf(this.app, this.run.ownerId, this.model, u);
    const cents = usd === null ? 0 : Math.ceil(Math.round(usd * 1e6) / 1e4);
    // Never less than already recorded: a CLI's own total replacing an estimate may be lower; spend stays a fact.
    return {
      tokens: Math.max(this.recorded.tokens, u.tokensIn + u.tokensOut),
      cents: Math.max(this.recorded.cents, cents),
    };
  }

  /** A resumed session's figures are the session's: its earlier runs are taken off. */
  private ownUsage(): UsageSoFar {
    const u = this.usage.usage();
    if (!u.cumulative?.cliSession) return u;
    const before = cliSessionTokens(this.app.engine.db, u.cumulative.cliSession, this.run.runId);
    return {
      ...u,
      tokensIn: Math.max(0, u.tokensIn - before.tokensIn),
      tokensOut: Math.max(0, u.tokensOut - before.tokensOut),
    };
  }
}
