import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { buildSecretEnv } from '../actions/secrets/env.js';
import { verifyTask } from '../actions/tasks.js';
import { recipeProblem } from '../actions/verifiers.js';
import type { App } from '../app.js';
import type { StoredEvent } from '../engine/event.js';
import { getGoal } from '../projections/goal-queries.js';
import { awaitingCommandVerification, getTask, ownerOfTask, type TaskRow } from '../projections/task-queries.js';
import { log } from '../log.js';
import { pathPolicyFor, recheckRegistered } from '../actions/projects/paths.js';
import type { LimitKind, SandboxProfile } from '../events/sandbox.js';
import { Confiner, sandboxDefault } from './confine.js';
import { launch, PendingProcess } from './harness.js';
import { sendSystemDirect } from '../actions/notifications.js';

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
  private readonly running = new Map<number, PendingProcess>();
  private readonly finished = new Set<() => void>();
  private subscription: Subscription | null = null;
  private stopped = false;

  private readonly confiner: Confiner;

  /** Without a confiner (tests, `colony stdio`): one with the process-wide sandbox setting and no MCP endpoint (verifiers need none). */
  constructor(
    private readonly app: App,
    confiner?: Confiner,
  ) {
    this.confiner = confiner ?? new Confiner(app, { sandbox: sandboxDefault(), mcpUrl: null });
  }

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
    for (const p of this.running.values()) p.kill('SIGKILL');
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
    const pending = new PendingProcess();
    this.running.set(task.taskId, pending);
    void this.confined(task, ownerId, pending, fresh)
      .catch((err: Error) => log.error({ err, taskId: task.taskId }, 'command verifier failed'))
      .finally(() => {
        this.running.delete(task.taskId);
        for (const f of [...this.finished]) f();
      });
  }

  /** Runs the recipe confined (confine.ts); its verdict carries the profile and the limit it ran into. Refused confinement runs nothing. */
  private async confined(task: TaskRow, ownerId: number, pending: PendingProcess, fresh: boolean): Promise<void> {
    await Promise.resolve(); // a verdict, even an immediate one, comes after the command that asked for it has answered
    if (task.verifier.kind !== 'command') return;
    const dir = this.directory(task, task.verifier.cwd);
    if (typeof dir !== 'string') return this.record(task, 'reject', dir.problem, null, '');
    if (!existsSync(dir))
      return this.record(
        task,
        'reject',
        `verifier command could not start: its directory ${dir} does not exist`,
        null,
        '',
      );
    const { cmd, timeout_sec } = task.verifier;
    const timeoutSec = timeout_sec ?? DEFAULT_VERIFY_TIMEOUT_SEC;
    const secrets = this.secrets(task, ownerId);
    const confined = await this.confiner.prepare({
      role: 'verifier',
      label: `verify-${task.taskId}`,
      command: cmd,
      cwd: dir,
      env: { ...secrets, ...this.environment(task) },
      home: null,
      overrides: null,
    });
    if ('refused' in confined) return this.refuseToRun(task, ownerId, confined.refused, fresh);
    try {
      if (this.stopped) return;
      const proc = launch({
        command: cmd,
        file: confined.file,
        args: confined.args,
        cwd: dir,
        env: confined.env,
        stdin: '',
        timeoutSec,
        secrets: Object.values(secrets),
        killGraceMs: KILL_GRACE_MS,
      });
      pending.attach(proc);
      const r = await proc.done;
      const limit = confined.limitHit(r);
      const tail = Buffer.from(r.tail, 'utf8');
      const output = (tail.length > OUTPUT_TAIL_BYTES ? tail.subarray(tail.length - OUTPUT_TAIL_BYTES) : tail).toString(
        'utf8',
      );
      // A check that ran into a limit did not finish its job: no approval, whatever it exited with.
      const verdict = !r.timedOut && !r.spawnError && !limit && r.exitCode === 0 ? 'approve' : 'reject';
      const reason = r.spawnError
        ? `verifier command could not start: ${r.spawnError}`
        : limit
          ? `verifier command ran into its ${LIMIT_WORDS[limit]} limit${r.timedOut ? ` (and timed out after ${timeoutSec}s)` : ''}`
          : r.timedOut
            ? `verifier command timed out after ${timeoutSec}s`
            : r.exitCode === 0
              ? 'verifier command exited 0'
              : `verifier command exited ${r.exitCode ?? `by ${r.signal ?? 'a signal'}`}`;
      if (!this.stopped) this.record(task, verdict, reason, r.exitCode, output, confined.profile, limit);
    } finally {
      confined.release();
    }
  }

  /** Nothing runs: the approved recipe is gone. The task waits (the owner cancels it or re-plans); the owner hears of it once. */
  private refuseToRun(task: TaskRow, ownerId: number, problem: string, tell: boolean): void {
    log.warn({ taskId: task.taskId, problem }, 'command verifier not run');
    if (!tell || !this.app.engine.db.open) return;
    try {
      sendSystemDirect(
        this.app,
        ownerId,
        `user-${ownerId}`,
        `Task #${task.taskId} "${task.title}" awaits its command verifier, which was not run: ${problem}. Cancel the task or verify it another way.`,
        { event: 'VerifierNotRun', task_id: task.taskId },
        { actor: 'system' },
      );
    } catch (err) {
      log.warn({ err, taskId: task.taskId }, 'could not tell the owner that a verifier was not run');
    }
  }

  /** The directory approved with the task, re-resolved now: a directory swapped for a symlink since is refused. */
  private directory(task: TaskRow, cwd: string | undefined): string | { problem: string } {
    if (cwd === undefined) return join(this.app.dataDir, 'workspace');
    try {
      return recheckRegistered(pathPolicyFor(this.app), cwd, "the verifier's working directory");
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
    const granted = task.verifier.kind === 'command' ? (task.verifier.secrets ?? []) : [];
    try {
      return buildSecretEnv(this.app, {
        ownerId,
        agentId: null,
        taskId: task.taskId,
        purpose: 'command_verifier',
        userSecrets: granted,
      });
    } catch (err) {
      log.warn(
        { reason: (err as Error).message, taskId: task.taskId },
        'secrets were not injected into the verifier command',
      );
      return {};
    }
  }

  /** A clean environment: the task context and what a shell needs, never the server's own secrets. */
  private environment(task: TaskRow): NodeJS.ProcessEnv {
    const goal = task.goalId === null ? null : getGoal(this.app.engine.db, task.goalId);
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LANG: process.env.LANG ?? 'C.UTF-8',
      COLONY_TASK_ID: String(task.taskId),
      COLONY_TASK_TITLE: task.title,
      COLONY_TASK_DESCRIPTION: task.description,
      COLONY_TASK_ACCEPTANCE_CRITERIA: task.acceptanceCriteria,
      COLONY_TASK_ANCESTRY: JSON.stringify(task.ancestry),
      COLONY_GOAL_ID: task.goalId === null ? '' : String(task.goalId),
      COLONY_GOAL_TITLE: goal?.title ?? '',
    };
  }

  private record(
    task: TaskRow,
    verdict: 'approve' | 'reject',
    reason: string,
    exitCode: number | null,
    output: string,
    sandbox?: SandboxProfile,
    limit?: LimitKind | null,
  ): void {
    if (!this.app.engine.db.open) return;
    const ownerId = ownerOfTask(this.app.engine.db, task);
    if (ownerId === null) return;
    try {
      verifyTask(
        this.app,
        { key: 'system', name: 'system', tenant: ownerId },
        task.taskId,
        verdict,
        reason,
        { kind: 'command', exitCode, output, sandbox, limit: limit ?? null },
        { actor: 'system' },
      );
    } catch (err) {
      // Someone else decided first (another process picked it up after a restart): nothing to do.
      log.warn({ err, taskId: task.taskId }, 'command verdict not recorded');
    }
  }
}

const LIMIT_WORDS: Record<LimitKind, string> = {
  cpu: 'CPU time',
  memory: 'memory',
  pids: 'process count',
  file_size: 'file size',
};
