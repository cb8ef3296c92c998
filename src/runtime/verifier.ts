import type { Subscription } from 'rxjs';
import { verifyTask } from '../actions/tasks.js';
import { recipeProblem } from '../actions/verifiers.js';
import type { App } from '../app.js';
import type { StoredEvent } from '../engine/event.js';
import { awaitingCommandVerification, getTask, ownerOfTask, type TaskRow } from '../projections/task-queries.js';
import { log } from '../log.js';
import type { LimitKind, SandboxProfile } from '../events/sandbox.js';
import { Confiner, sandboxDefault } from './confine.js';
import { launch, PendingProcess } from './harness.js';
import { sendSystemDirect } from '../actions/notifications.js';
import { verifierEnvironment, verifierPlace, verifierSecrets } from './verifier-inputs.js';
import { commandVerdict } from './verifier-verdict.js';

/**
 * Command verifiers, a side effect after commit (never inside a command's transaction): when a task with a
 * command verifier enters awaiting_verification, run its recipe's `sh -c cmd` in its cwd with the task
 * context in the environment (verifier-inputs.ts); exit 0 approves, any other exit or a timeout rejects
 * with the reason and the last 4 KiB of output (verifier-verdict.ts). The verdict comes back as a command
 * by `system`. On start it picks up tasks a crash left awaiting a command verifier.
 *
 * Only what the owner approved runs: the task's recipe must still be registered with the same command
 * (else nothing runs and the owner is told), and the working directory must still resolve to itself
 * inside the allowed roots (else the verdict is a rejection: someone moved it).
 */
export const DEFAULT_VERIFY_TIMEOUT_SEC = 60;
const KILL_GRACE_MS = 5_000;
/** How often the log is read for tasks handed in by other processes. */
const FOLLOW_MS = 500;
/** One hand-in of a task: a task rejected and handed in again is verified again. */
const handIn = (task: TaskRow): string => `${task.taskId}@${task.submittedAt}`;

export class CommandVerifier {
  private readonly running = new Map<number, PendingProcess>();
  private readonly finished = new Set<() => void>();
  private subscription: Subscription | null = null;
  private poller: NodeJS.Timeout | null = null;
  /** Every hand-in this process took up (or refused to run): each is run, and its owner told, once. */
  private readonly seen = new Set<string>();
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
    for (const task of awaitingCommandVerification(this.app.engine.db)) {
      this.seen.add(handIn(task));
      this.run(task);
    }
    // Tasks handed in through another process (a `colony stdio` agent beside serve): only the holder of the
    // data dir's lock runs verifiers (cli/data-lock.ts), so it runs theirs too, once each.
    this.poller = setInterval(() => this.follow(), FOLLOW_MS);
    this.poller.unref();
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
    if (this.poller) clearInterval(this.poller);
    for (const p of this.running.values()) p.kill('SIGKILL');
  }

  private consider(taskId: number): void {
    const task = getTask(this.app.engine.db, taskId);
    if (task?.verifier.kind !== 'command' || task.status !== 'awaiting_verification' || this.seen.has(handIn(task)))
      return;
    this.seen.add(handIn(task));
    this.run(task, true);
  }

  private follow(): void {
    if (this.stopped || !this.app.engine.db.open) return;
    const awaiting = awaitingCommandVerification(this.app.engine.db);
    const now = new Set(awaiting.map(handIn));
    for (const key of this.seen) if (!now.has(key)) this.seen.delete(key);
    for (const task of awaiting)
      if (!this.seen.has(handIn(task))) {
        this.seen.add(handIn(task));
        this.run(task, true);
      }
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
      .catch((err: Error) => {
        // Whatever went wrong, the task does not wait for a verdict that never comes.
        log.error({ err, taskId: task.taskId }, 'command verifier failed');
        this.record(task, 'reject', `verifier command could not start: ${err.message}`, null, '');
      })
      .finally(() => {
        this.running.delete(task.taskId);
        for (const f of [...this.finished]) f();
      });
  }

  /** Runs the recipe confined (confine.ts); its verdict carries the profile and the limit it ran into. Refused confinement runs nothing. */
  private async confined(task: TaskRow, ownerId: number, pending: PendingProcess, fresh: boolean): Promise<void> {
    await Promise.resolve(); // a verdict, even an immediate one, comes after the command that asked for it has answered
    if (task.verifier.kind !== 'command') return;
    const place = verifierPlace(this.app, task);
    if ('problem' in place) return this.record(task, 'reject', place.problem, null, '');
    const { cmd, timeout_sec } = task.verifier;
    const timeoutSec = timeout_sec ?? DEFAULT_VERIFY_TIMEOUT_SEC;
    const secrets = verifierSecrets(this.app, task, ownerId);
    const confined = await this.confiner.prepare({
      role: 'verifier',
      label: `verify-${task.taskId}`,
      command: cmd,
      cwd: place.dir,
      cwdWritable: place.writable,
      env: { ...secrets, ...verifierEnvironment(this.app, task) },
      home: null,
      overrides: null,
    });
    // A directory that vanished or became a symlink is a verdict (the task never waits on nothing); a missing sandbox is the owner's to fix.
    if ('refused' in confined)
      return confined.cause === 'place'
        ? this.record(task, 'reject', `verifier command not run: ${confined.refused}`, null, '')
        : this.refuseToRun(task, ownerId, confined.refused, fresh);
    try {
      if (this.stopped) return;
      const proc = launch({
        command: cmd,
        file: confined.file,
        args: confined.args,
        cwd: place.dir,
        env: confined.env,
        fds: confined.fds,
        stdin: '',
        timeoutSec,
        secrets: Object.values(secrets),
        killGraceMs: KILL_GRACE_MS,
        watch: confined.watch,
      });
      pending.attach(proc);
      const r = await proc.done;
      const limit = confined.limitHit(r);
      const { verdict, reason, output } = commandVerdict(r, limit, timeoutSec);
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
