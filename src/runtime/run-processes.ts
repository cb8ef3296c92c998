import { KILL_GRACE_MS } from './harness.js';

interface Held {
  runId: number;
  agentId: number;
  process: { kill(signal: NodeJS.Signals): void } | null;
}

/** The agent processes one reactor runs, by run — at most one per agent — and how they are ended. */
export class RunProcesses {
  private readonly byRun = new Map<number, Held>();

  constructor(private readonly killGraceMs = KILL_GRACE_MS) {}

  get size(): number {
    return this.byRun.size;
  }

  has(runId: number): boolean {
    return this.byRun.has(runId);
  }

  /** Whether one of the agent's runs is running here. */
  busy(agentId: number): boolean {
    return [...this.byRun.values()].some((r) => r.agentId === agentId);
  }

  add(held: Held): void {
    this.byRun.set(held.runId, held);
  }

  delete(runId: number): void {
    this.byRun.delete(runId);
  }

  /**
   * The log says a run this process still runs has ended (it was cancelled, from here or from another
   * process): its process goes — SIGTERM, then SIGKILL after the grace if it is still there.
   */
  kill(runId: number): void {
    const held = this.byRun.get(runId);
    if (!held?.process) return;
    held.process.kill('SIGTERM');
    setTimeout(() => {
      if (this.byRun.get(runId) === held) held.process?.kill('SIGKILL');
    }, this.killGraceMs).unref();
  }

  /** The owner stopped the agent: its process is asked to end (SIGTERM); the run records its own end. */
  stopAgent(agentId: number): void {
    for (const r of this.byRun.values()) if (r.agentId === agentId) r.process?.kill('SIGTERM');
  }

  /** Shutdown: every process is killed at once. Returns the runs they ran. */
  killAll(): number[] {
    const runs = [...this.byRun.values()];
    this.byRun.clear();
    for (const { process } of runs) process?.kill('SIGKILL');
    return runs.map((r) => r.runId);
  }
}
