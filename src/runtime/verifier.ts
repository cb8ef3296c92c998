import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { sendSystemDirect } from '../actions/channels.js';
import { buildSecretEnv } from '../actions/secret-env.js';
import { verifyTask } from '../actions/tasks.js';
import { recipeProblem } from '../actions/verifiers.js';
import type { App } from '../app.js';
import type { StoredEvent } from '../events/event.js';
import { getGoal } from '../projections/goal-queries.js';
import { awaitingCommandVerification, getTask, ownerOfTask, type TaskRow } from '../projections/task-queries.js';
import { log } from '../log.js';
import { pathPolicyFor, recheckRegistered } from '../mcp/paths.js';
import { redactOutput } from './redact.js';

/**
 * Command verifiers (DESIGN §3.13, §8), a side effect after commit (rule 8): when a task with a command
 * verifier enters awaiting_verification, run its recipe's `sh -c cmd` in its cwd with the task context
 * in the environment; exit 0 approves, any other exit or a timeout rejects with the reason and the last
 * 4 KiB of output. The verdict comes back as a command by `system`. On start it picks up tasks a
 * crash left awaiting a command verifier.
 *
 * Only what the owner approved runs: the task's recipe must still be registered with the same command
 * (else nothing runs and the owner is told), and the working directory must still resolve to itself
 * inside the allowed roots (else the verdict is a rejection: someone moved it).
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
    if (task?.verifier.kind === 'command' && task.status === 'awaiting_verification') this.run(task, true);
  }

  private run(task: TaskRow, fresh = false): void {
    if (task.verifier.kind !== 'command' || this.running.has(task.taskId)) return;
    const ownerId = ownerOfTask(this.app.engine.db, task);
    if (ownerId === null) return;
    const problem = recipeProblem(this.app, ownerId, task.verifier);
    if (problem) return this.refuseToRun(task, ownerId, problem, fresh);
    const { cmd, cwd, timeout_sec } = task.verifier;
    const dir = this.directory(task, cwd);
    if (typeof dir !== 'string') return this.record(task, 'reject', dir.problem, null, '');
    const timeoutSec = timeout_sec ?? DEFAULT_VERIFY_TIMEOUT_SEC;
    const secrets = this.secrets(task, ownerId);
    const child = spawn('/bin/sh', ['-c', cmd], { cwd: dir, env: { ...secrets, ...this.environment(task) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
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

  /** Nothing runs: the approved recipe is gone. The task waits (the owner cancels it or re-plans); the owner hears of it once. */
  private refuseToRun(task: TaskRow, ownerId: number, problem: string, tell: boolean): void {
    log.warn({ taskId: task.taskId, problem }, 'command verifier not run');
    if (!tell || !this.app.engine.db.open) return;
    try {
      sendSystemDirect(this.app, ownerId, `user-${ownerId}`, `Task #${task.taskId} "${task.title}" awaits its command verifier, which was not run: ${problem}. Cancel the task or verify it another way.`,
        { event: 'VerifierNotRun', task_id: task.taskId }, { actor: 'system' });
    } catch (err) {
      log.warn({ err, taskId: task.taskId }, 'could not tell the owner that a verifier was not run');
    }
  }

  /** The directory approved with the task, re-resolved now: a directory swapped for a symlink since is refused. */
  private directory(task: TaskRow, cwd: string | undefined): string | { problem: string } {
    if (cwd === undefined) return join(this.app.dataDir, 'workspace');
    try {
      return recheckRegistered(pathPolicyFor(this.app), cwd, 'the verifier\'s working directory');
    } catch (e) {
      return { problem: `verifier command not run: ${(e as Error).message}` };
    }
  }

  /**
   * The secrets for this process only: the task's, plus the user-scope secrets its recipe was granted by
   * name — never the assignee's, never the owner's others (DESIGN §8). Colony's own variables
   * (environment) win over a secret of the same name. If they cannot be opened (wrong master key) the
   * command runs without them and the log says why.
   */
  private secrets(task: TaskRow, ownerId: number): Record<string, string> {
    const granted = task.verifier.kind === 'command' ? task.verifier.secrets ?? [] : [];
    try {
      return buildSecretEnv(this.app, { ownerId, agentId: null, taskId: task.taskId, purpose: 'command_verifier', userSecrets: granted });
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
