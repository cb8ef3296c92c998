import type { Subscription } from 'rxjs';
import {
  failRun,
  recordSessionMessage,
  requestRun,
  startQueuedRun,
  type WakeOutcome,
  type WakeRequest,
} from '../actions/runs.js';
import type { App } from '../app.js';
import { GroupCommit } from '../engine/group-commit.js';
import type { StoredEvent } from '../engine/event.js';
import { LogFollower } from './log-follower.js';
import { log } from '../log.js';
import { getRun, queuedRunsOf, runsInStatus, type RunRow } from '../projections/run-queries.js';
import { agentsWithQueuedRuns } from '../projections/sweep-queries.js';
import { runProcess, type RunnerOptions } from './runner.js';
import { RunProcesses } from './run-processes.js';
import { RunWaiters } from './run-waiters.js';
import { dueTaskTimers } from './task-timers.js';
import { StallWatch } from './goal-stalls.js';
import { authorRunOf, wakesFor, type MessageFact } from './wake-sources.js';
import { noticeClosedBlocker, waitsOnBlockers } from './task-unblock.js';

/**
 * The reactor: a side effect after commit, never inside a command's transaction. It tails the event log —
 * this process's commits at once through the bus, other processes' (the CLI) on the next poll — and turns
 * facts into wake-ups (wake-sources.ts), and an agent's messages into its running session's transcript. A
 * sweep adds task_timer wake-ups (task-timers.ts), re-wakes the coordinator of a stalled draft goal and then
 * tells its owner (goal-stalls.ts), and starts queued runs whose cooldown is over. One run
 * per agent at a time (run-processes.ts); a run's end starts the agent's next queued run. On start it marks
 * runs a crash left running as failed and resumes the queued ones.
 */
export interface ReactorOptions extends RunnerOptions {
  pollMs?: number;
  /** How long a draft goal may wait with nothing proposed or running before its coordinator is re-woken (goal-stalls.ts); COLONY_GOAL_STALL_SEC. */
  stallMs?: number;
}

/** What execute_agent needs to run an agent: the reactor, or on a node that does not lead its tenant, runtime/log-runs.ts. */
export interface RunStarter {
  beginExecute(agentId: number, prompt: string, by: string): RunRow;
  awaitRun(run: RunRow): Promise<RunRow>;
}

export class Reactor implements RunStarter {
  /** Null until `start`: a reactor not started reacts to nothing. */
  private follower: LogFollower | null = null;
  private readonly running: RunProcesses;
  private readonly waiters = new RunWaiters();
  private subscription: Subscription | null = null;
  private poller: NodeJS.Timeout | null = null;
  private drainScheduled = false;
  private stopped = false;
  private readonly stalls: StallWatch;

  constructor(
    private readonly app: App,
    private readonly options: ReactorOptions,
  ) {
    this.running = new RunProcesses(options.killGraceMs);
    this.stalls = new StallWatch(app, options.stallMs);
  }

  start(): this {
    const db = this.app.engine.db;
    this.follower = new LogFollower(this.app.engine);
    for (const run of runsInStatus(db, 'running')) {
      failRun(this.app, run.runId, 'Colony stopped while this run was in progress; its process is gone');
    }
    this.subscription = this.app.engine.bus.events$.subscribe((e) => {
      this.follower?.publish(e);
      this.scheduleDrain();
    });
    this.poller = setInterval(() => this.tick(), this.options.pollMs ?? 250);
    this.poller.unref();
    this.sweep();
    return this;
  }

  stop(): void {
    this.stopped = true;
    this.subscription?.unsubscribe();
    if (this.poller) clearInterval(this.poller);
    for (const runId of this.running.killAll()) {
      if (this.app.engine.db.open) safely(() => failRun(this.app, runId, 'Colony stopped during this run'));
    }
  }

  /** A wake-up from outside the log (execute_agent, tests): queued like any other, started if the agent is free. */
  wake(req: WakeRequest): WakeOutcome {
    // No caller's work even when a tool call asks for it (execute_agent): the run's commands commit on
    // their own, and nothing the run starts later joins that call's group commit.
    return GroupCommit.detached(() => {
      const outcome = requestRun(this.app, req);
      this.pump(req.agentId);
      return { ...outcome, run: getRun(this.app.engine.db, outcome.run.runId)! };
    });
  }

  /** Resolves with the run once it has ended (finished, failed, timed out or refused). */
  whenDone(runId: number): Promise<RunRow> {
    return this.waiters.whenDone(this.app.engine.db, runId);
  }

  /** Resolves when no run is running or startable and the log is drained (tests, the demo, benchmarks). */
  async idle(pollMs = 20): Promise<void> {
    for (;;) {
      this.drain();
      const db = this.app.engine.db;
      const startable = agentsWithQueuedRuns(db).some((id) =>
        queuedRunsOf(db, id).some((r) => !r.notBefore || Date.parse(r.notBefore) <= this.app.engine.clock().getTime()),
      );
      if (this.running.size === 0 && !startable && (this.follower?.caughtUp ?? true)) return;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  get activeRuns(): number {
    return this.running.size;
  }

  private tick(): void {
    this.drain();
    this.sweep();
  }

  private scheduleDrain(): void {
    if (this.drainScheduled || this.stopped) return;
    this.drainScheduled = true;
    GroupCommit.detached(() =>
      setImmediate(() => {
        this.drainScheduled = false;
        this.drain();
      }),
    );
  }

  private drain(): void {
    if (this.stopped || !this.app.engine.db.open) return;
    // Reacts only to events on disk (the follower stops at the durable head), and reads projections with
    // no open batch under them: that batch is committed first (it is complete by now; its sync stays ours).
    this.app.engine.group.commitOpen();
    this.follower?.follow((event) => safely(() => this.react(event)));
  }

  private react(e: StoredEvent): void {
    const d = e.data as Record<string, unknown>;
    switch (e.type) {
      case 'MessagePosted': {
        const author = authorRunOf(this.app.engine.db, d as unknown as MessageFact);
        if (author && this.running.has(author.run.runId)) {
          recordSessionMessage(
            this.app,
            author.run.runId,
            'agent',
            `[message #${d.messageId} to ${author.channelName}] ${d.body}`,
          );
        }
        break;
      }
      case 'RunQueued':
      case 'RunFinished':
      case 'RunFailed':
      case 'RunRefused':
      case 'AgentStarted':
        if (e.type === 'RunFailed') this.running.kill(d.runId as number);
        this.waiters.settle(this.app.engine.db, d.runId as number | undefined);
        this.pump(d.agentId as number);
        return;
      case 'AgentStopped':
        this.running.stopAgent(d.agentId as number);
        return;
      default:
    }
    for (const wake of wakesFor(this.app.engine.db, e)) safely(() => this.wake(wake));
    safely(() => noticeClosedBlocker(this.app, e));
  }

  /** Starts the agent's oldest queued run that may start now (one run per agent at a time). */
  private pump(agentId: number): void {
    if (this.stopped || this.running.busy(agentId)) return;
    for (const queued of queuedRunsOf(this.app.engine.db, agentId)) {
      const run = startQueuedRun(this.app, queued.runId);
      if (run) {
        this.launch(run);
        return;
      }
      if (getRun(this.app.engine.db, queued.runId)?.status === 'queued') return; // it waits (cooldown, or a run elsewhere)
    }
  }

  private launch(run: RunRow): void {
    const launched = runProcess(this.app, run, this.options);
    this.running.add({ runId: run.runId, agentId: run.agentId, process: launched.process });
    void launched.done.then(
      () => this.ended(run.runId),
      (err) => {
        log.error({ err, runId: run.runId }, 'a run did not record its end');
        this.ended(run.runId);
      },
    );
  }

  private ended(runId: number): void {
    this.running.delete(runId);
    this.scheduleDrain();
  }

  /** Queued runs whose cooldown is over, task timers that are due, and stalled draft goals. */
  private sweep(): void {
    if (this.stopped || !this.app.engine.db.open) return;
    const db = this.app.engine.db;
    for (const agentId of agentsWithQueuedRuns(db)) safely(() => this.pump(agentId));
    const now = this.app.engine.clock().getTime();
    for (const wake of dueTaskTimers(db, now)) if (!waitsOnBlockers(db, wake)) safely(() => this.wake(wake));
    this.stalls.sweep(now, (wake) => safely(() => this.wake(wake)));
  }

  /**
   * execute_agent's wake-up: the agent runs now with this prompt (queued behind its current run, if any).
   * Returns the run as recorded — queued, already running, or refused by a gate — without waiting: the
   * run lives in the log, so an MCP task can follow it from there (src/mcp/tasks).
   */
  beginExecute(agentId: number, prompt: string, by: string): RunRow {
    return this.wake({ agentId, source: 'execute_agent', prompt, by }).run;
  }

  /** A run begun by beginExecute, at its end (at most twice its timeout, plus 30 s; a refused one at once). */
  awaitRun(run: RunRow): Promise<RunRow> {
    return this.waiters.awaitRun(this.app.engine.db, run);
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.warn({ err }, 'reactor step failed');
  }
}
