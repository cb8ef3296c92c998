import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { buildSecretEnv } from '../actions/secret-env.js';
import { verifyTask } from '../actions/tasks.js';
import type { App } from '../app.js';
import type { StoredEvent } from '../events/event.js';
import { getGoal } from '../projections/goal-queries.js';
import { awaitingCommandVerification, getTask, ownerOfTask, type TaskRow } from '../projections/task-queries.js';
import { log } from '../log.js';
import { redactOutput } from './redact.js';

/**
 * Command verifiers (DESIGN §3.13), a side effect after commit (rule 8): when a task with a command
 * verifier enters awaiting_verification, run `sh -c cmd` in its cwd with the task context in the
 * environment; exit 0 approves, any other exit or a timeout rejects with the reason and the last
 * 4 KiB of output. The verdict comes back as a command by `system`. On start it picks up tasks a
 * crash left awaiting a command verifier.
 */
export const OUTPUT_TAIL_BYTES = 4096;
export const DEFAULT_VERIFY_TIMEOUT_SEC = 60;
const KILL_GRACE_MS = 5_000;

export class CommandVerifier {
  private readonly running = new Map<number, ChildProcess>();
  private readonly finished = new Set<() => void>();
  private subscription: Subscription | null = null;
  private stopped = false;

  constructor(private readonly app: App) {}

  start(): this {
    this.subscription = this.app.engine.bus.events$.subscribe((e: StoredEvent) => {
      if (e.type === 'TaskCompleted') this.consider((e.data as { taskId: number }).taskId);
    });
    for (const task of awaitingCommandVerification(this.app.engine.db)) this.run(task);
    return this;
  }

  /** Resolves when no verifier command is running (tests and shutdown). */
  idle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.running.size === 0) {
          this.finished.delete(check);
          resolve();
        }
      };
      this.finished.add(check);
    });
  }

  /** Shutdown: kills every running command's process group; a command killed so is no verdict (the next start runs it again). */
  stop(): void {
    this.stopped = true;
    this.subscription?.unsubscribe();
    for (const child of this.running.values()) killGroup(child, 'SIGKILL');
  }

  private consider(taskId: number): void {
    const task = getTask(this.app.engine.db, taskId);
    if (task?.verifier.kind === 'command' && task.status === 'awaiting_verification') this.run(task);
  }

  private run(task: TaskRow): void {
    if (task.verifier.kind !== 'command' || this.running.has(task.taskId)) return;
    const { cmd, cwd, timeout_sec } = task.verifier;
    const timeoutSec = timeout_sec ?? DEFAULT_VERIFY_TIMEOUT_SEC;
    const secrets = this.secrets(task);
    const child = spawn('/bin/sh', ['-c', cmd], {
      cwd: cwd ?? join(this.app.dataDir, 'workspace'), env: { ...secrets, ...this.environment(task) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    this.running.set(task.taskId, child);
    let tail = Buffer.alloc(0);
    const keep = (chunk: Buffer) => {
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > OUTPUT_TAIL_BYTES) tail = tail.subarray(tail.length - OUTPUT_TAIL_BYTES);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child, 'SIGTERM');
      setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS).unref();
    }, timeoutSec * 1000);
    let settled = false;
    // A command that cannot start emits 'error' and then 'close': only the first counts.
    const done = (exitCode: number | null, error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const output = redactOutput(tail, Object.values(secrets), OUTPUT_TAIL_BYTES);
      const verdict = !timedOut && !error && exitCode === 0 ? 'approve' : 'reject';
      const reason = error ? `verifier command could not start: ${error.message}`
        : timedOut ? `verifier command timed out after ${timeoutSec}s`
        : exitCode === 0 ? 'verifier command exited 0' : `verifier command exited ${exitCode ?? 'by a signal'}`;
      if (!this.stopped) this.record(task, verdict, reason, exitCode, output);
      this.running.delete(task.taskId);
      for (const f of [...this.finished]) f();
    };
    child.once('error', (err) => done(null, err));
    child.once('close', (code) => done(code));
  }

  /**
   * The secrets in scope — the task's, its assignee's, the owner's (task > agent > user) — for this process
   * only; Colony's own variables (environment) win over a secret of the same name. If they cannot be opened
   * (wrong master key) the command runs without them and the log says why.
   */
  private secrets(task: TaskRow): Record<string, string> {
    const ownerId = ownerOfTask(this.app.engine.db, task);
    if (ownerId === null) return {};
    try {
      return buildSecretEnv(this.app, { ownerId, agentId: task.assigneeAgentId, taskId: task.taskId, purpose: 'command_verifier' });
    } catch (err) {
      log.warn({ reason: (err as Error).message, taskId: task.taskId }, 'secrets were not injected into the verifier command');
      return {};
    }
  }

  /** A clean environment: the task context and what a shell needs, never the server's own secrets. */
  private environment(task: TaskRow): NodeJS.ProcessEnv {
    const goal = task.goalId === null ? null : getGoal(this.app.engine.db, task.goalId);
    return {
      PATH: process.env.PATH, HOME: process.env.HOME, LANG: process.env.LANG ?? 'C.UTF-8',
      COLONY_TASK_ID: String(task.taskId), COLONY_TASK_TITLE: task.title, COLONY_TASK_DESCRIPTION: task.description,
      COLONY_TASK_ACCEPTANCE_CRITERIA: task.acceptanceCriteria, COLONY_TASK_ANCESTRY: JSON.stringify(task.ancestry),
      COLONY_GOAL_ID: task.goalId === null ? '' : String(task.goalId), COLONY_GOAL_TITLE: goal?.title ?? '',
    };
  }

  private record(task: TaskRow, verdict: 'approve' | 'reject', reason: string, exitCode: number | null, output: string): void {
    if (!this.app.engine.db.open) return;
    const ownerId = ownerOfTask(this.app.engine.db, task);
    if (ownerId === null) return;
    try {
      verifyTask(this.app, { key: 'system', name: 'system', tenant: ownerId }, task.taskId, verdict, reason, { kind: 'command', exitCode, output }, { actor: 'system' });
    } catch (err) {
      // Someone else decided first (another process picked it up after a restart): nothing to do.
      log.warn({ err, taskId: task.taskId }, 'command verdict not recorded');
    }
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    /* already gone, or it never started */
  }
}
