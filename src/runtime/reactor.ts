import type { Subscription } from 'rxjs';
import { failRun, recordSessionMessage, requestRun, startQueuedRun, type WakeOutcome, type WakeRequest } from '../actions/runs.js';
import { runtimeSettings } from '../actions/runtime-settings.js';
import type { App } from '../app.js';
import { MENTION } from '../events/channels.js';
import type { StoredEvent } from '../events/event.js';
import { readAll } from '../events/store.js';
import { log } from '../log.js';
import { getChannel } from '../projections/channel-queries.js';
import { getTask } from '../projections/goal-queries.js';
import { getAgent, getAgentByName } from '../projections/principals.js';
import {
  agentsWithQueuedRuns, getRun, lastTaskRunStart, queuedRunFor, queuedRunsOf, runningRunOf, runsInStatus, timedTasks, type RunRow,
} from '../projections/run-queries.js';
import { runProcess, type RunnerOptions } from './runner.js';
import type { RunningProcess } from './harness.js';

/**
 * The reactor (DESIGN §3.14, rule 8): it tails the event log — this process's commits at once through
 * the bus, other processes' (the CLI) on the next poll — and turns facts into wake-ups: goal_created
 * (the coordinator), task_assignment (a fresh claim), verification_requested (a peer verifier), DMs and
 * @mentions (message_received), probe envelopes (probe). A sweep adds task_timer wake-ups
 * (heartbeat_config.interval_sec) and starts queued runs whose cooldown is over. One run per agent at a
 * time; a run's end starts the agent's next queued run. On start it marks runs a crash left running as
 * failed and resumes the queued ones.
 */
export interface ReactorOptions extends RunnerOptions { pollMs?: number }

const TERMINAL = new Set(['succeeded', 'failed', 'timed_out', 'refused']);

export class Reactor {
  private cursor = 0;
  private readonly running = new Map<number, { runId: number; agentId: number; process: RunningProcess | null }>();
  private readonly waiters = new Map<number, ((run: RunRow) => void)[]>();
  private subscription: Subscription | null = null;
  private poller: NodeJS.Timeout | null = null;
  private drainScheduled = false;
  private stopped = false;

  constructor(private readonly app: App, private readonly options: ReactorOptions) {}

  start(): this {
    const db = this.app.engine.db;
    this.cursor = this.app.engine.head().position;
    for (const run of runsInStatus(db, 'running')) {
      failRun(this.app, run.runId, 'Colony stopped while this run was in progress; its process is gone');
    }
    this.subscription = this.app.engine.bus.events$.subscribe(() => this.scheduleDrain());
    this.poller = setInterval(() => this.tick(), this.options.pollMs ?? 250);
    this.poller.unref();
    this.sweep();
    return this;
  }

  stop(): void {
    this.stopped = true;
    this.subscription?.unsubscribe();
    if (this.poller) clearInterval(this.poller);
    for (const { runId, process } of this.running.values()) {
      process?.kill('SIGKILL');
      if (this.app.engine.db.open) safely(() => failRun(this.app, runId, 'Colony stopped during this run'));
    }
    this.running.clear();
  }

  /** A wake-up from the log: agents without a backend are run from outside, so they are not woken (no run, no refusal). */
  private wakeIfRunnable(req: WakeRequest): void {
    if (getAgent(this.app.engine.db, req.agentId)?.command) this.wake(req);
  }

  /** A wake-up from outside the log (execute_agent, tests): queued like any other, started if the agent is free. */
  wake(req: WakeRequest): WakeOutcome {
    const outcome = requestRun(this.app, req);
    this.pump(req.agentId);
    return { ...outcome, run: getRun(this.app.engine.db, outcome.run.runId)! };
  }

  /** Resolves with the run once it has ended (finished, failed, timed out or refused). */
  whenDone(runId: number): Promise<RunRow> {
    const run = getRun(this.app.engine.db, runId);
    if (run && TERMINAL.has(run.status)) return Promise.resolve(run);
    return new Promise((resolve) => this.waiters.set(runId, [...(this.waiters.get(runId) ?? []), resolve]));
  }

  /** Resolves when no run is running or startable and the log is drained (tests, the demo, benchmarks). */
  async idle(pollMs = 20): Promise<void> {
    for (;;) {
      this.drain();
      const db = this.app.engine.db;
      const startable = agentsWithQueuedRuns(db).some((id) => queuedRunsOf(db, id).some((r) => !r.notBefore || Date.parse(r.notBefore) <= this.app.engine.clock().getTime()));
      if (this.running.size === 0 && !startable && this.cursor === this.app.engine.head().position) return;
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
    setImmediate(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    if (this.stopped || !this.app.engine.db.open) return;
    for (;;) {
      const page = readAll(this.app.engine.db, { after: this.cursor, limit: 500 });
      for (const event of page) {
        this.cursor = event.position;
        safely(() => this.react(event));
      }
      if (page.length < 500) return;
    }
  }

  private react(e: StoredEvent): void {
    const d = e.data as Record<string, unknown>;
    switch (e.type) {
      case 'GoalCreated':
        this.wakeIfRunnable({ agentId: d.coordinatorAgentId as number, source: 'goal_created', goalId: d.goalId as number, by: 'system' });
        return;
      case 'TaskClaimed':
        if (!d.renewed) this.wakeIfRunnable({ agentId: d.agentId as number, source: 'task_assignment', taskId: d.taskId as number, by: 'system' });
        return;
      case 'TaskCompleted': {
        const task = getTask(this.app.engine.db, d.taskId as number);
        if (task?.verifier.kind === 'peer' && task.status === 'awaiting_verification') {
          this.wakeIfRunnable({ agentId: task.verifier.agent_id, source: 'verification_requested', taskId: task.taskId, by: 'system' });
        }
        return;
      }
      case 'MessagePosted':
        this.onMessage(d as { messageId: number; channelId: number; from: string; body: string; metadata: Record<string, unknown> | null });
        return;
      case 'RunQueued': case 'RunFinished': case 'RunFailed': case 'RunRefused': case 'AgentStarted':
        this.settle(d.runId as number | undefined);
        this.pump(d.agentId as number);
        return;
      case 'AgentStopped':
        for (const r of this.running.values()) if (r.agentId === d.agentId) r.process?.kill('SIGTERM');
        return;
      default:
    }
  }

  /** DMs wake the agent they are to; @mentions in a channel wake each mentioned agent but the author. */
  private onMessage(m: { messageId: number; channelId: number; from: string; body: string; metadata: Record<string, unknown> | null }): void {
    const db = this.app.engine.db;
    const channel = getChannel(db, m.channelId);
    if (!channel) return;
    const author = m.from.startsWith('agent-') ? Number(m.from.slice(6)) : null;
    const authorRun = author === null ? null : runningRunOf(db, author);
    if (authorRun && this.running.has(authorRun.runId)) {
      recordSessionMessage(this.app, authorRun.runId, 'agent', `[message #${m.messageId} to ${channel.name}] ${m.body}`);
    }
    const depth = authorRun ? authorRun.depth + 1 : 0;
    const targets = new Set<number>();
    if (channel.kind === 'dm') {
      for (const key of channel.members) if (key !== m.from && key.startsWith('agent-')) targets.add(Number(key.slice(6)));
    } else {
      for (const [, name] of m.body.matchAll(MENTION)) {
        const agent = getAgentByName(db, channel.ownerId, name!);
        if (agent && agent.agentId !== author) targets.add(agent.agentId);
      }
    }
    const source = m.metadata && typeof m.metadata.probe_id === 'string' ? 'probe' : 'message_received';
    for (const agentId of targets) this.wakeIfRunnable({ agentId, source, messageIds: [m.messageId], depth, by: m.from });
  }

  /** Starts the agent's oldest queued run that may start now (one run per agent at a time). */
  private pump(agentId: number): void {
    if (this.stopped || [...this.running.values()].some((r) => r.agentId === agentId)) return;
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
    this.running.set(run.runId, { runId: run.runId, agentId: run.agentId, process: launched.process });
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

  private settle(runId: number | undefined): void {
    if (runId === undefined) return;
    const run = getRun(this.app.engine.db, runId);
    if (!run || !TERMINAL.has(run.status)) return;
    for (const resolve of this.waiters.get(runId) ?? []) resolve(run);
    this.waiters.delete(runId);
  }

  /** Queued runs whose cooldown is over, and task timers that are due. */
  private sweep(): void {
    if (this.stopped || !this.app.engine.db.open) return;
    const db = this.app.engine.db;
    for (const agentId of agentsWithQueuedRuns(db)) safely(() => this.pump(agentId));
    const now = this.app.engine.clock().getTime();
    for (const t of timedTasks(db)) {
      const last = lastTaskRunStart(db, t.agentId, t.taskId) ?? t.claimedAt;
      const busy = queuedRunFor(db, t.agentId, t.taskId) || runningRunOf(db, t.agentId)?.taskId === t.taskId;
      if (!busy && Date.parse(last) + t.intervalSec * 1000 <= now) {
        safely(() => this.wakeIfRunnable({ agentId: t.agentId, source: 'task_timer', taskId: t.taskId, by: 'system' }));
      }
    }
  }

  /** execute_agent: runs the agent now with this prompt (queued behind its current run, if any) and waits for the end. */
  async execute(agentId: number, prompt: string, by: string): Promise<RunRow> {
    const outcome = this.wake({ agentId, source: 'execute_agent', prompt, by });
    if (outcome.kind === 'refused') return outcome.run;
    const settings = runtimeSettings(this.app.engine.db, agentId);
    const limit = (settings.timeoutSec * 2 + 30) * 1000;
    return Promise.race([this.whenDone(outcome.run.runId), new Promise<RunRow>((resolve) => {
      setTimeout(() => resolve(getRun(this.app.engine.db, outcome.run.runId)!), limit).unref();
    })]);
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.warn({ err }, 'reactor step failed');
  }
}
