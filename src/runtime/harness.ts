import { spawn, type ChildProcess } from 'node:child_process';
import { redactOutput } from './redact.js';

/**
 * The process harness: one agent run as a child process (`/bin/sh -c <backend command>`) in its own
 * process group, the wake prompt on stdin, a clean environment built by the caller, stdout and stderr
 * captured. At the timeout it gets SIGTERM, and SIGKILL 15 s later if it is still there (the whole
 * group, so a backend's own children go too). It knows nothing of the log: the reactor records what
 * the returned promise says.
 */
export const OUTPUT_TAIL_BYTES = 8 * 1024;
/** The most stdout kept for the final usage object and the session's agent message (the end of it). */
export const STDOUT_KEEP_BYTES = 1024 * 1024;
export const KILL_GRACE_MS = 15_000;

export interface LaunchSpec {
  command: string;
  /** The program and arguments that run `command` (the sandbox's wrapper); default `/bin/sh -c command`. */
  file?: string;
  args?: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Descriptors the process inherits as 3, 4, … (the sandbox's mounts); every other descriptor of Colony's is close-on-exec. */
  fds?: readonly number[];
  stdin: string;
  timeoutSec: number;
  /** Values to mask in the recorded output (the secrets handed to the process, its token). */
  secrets: readonly string[];
  /** Called once when the timeout fires (before SIGTERM), so the run can record RunTimedOut. */
  onTimeout?: () => void;
  killGraceMs?: number;
  /** Watches the running process (its disk use, disk-watch.ts) and may stop it; the function it returns ends the watch. */
  watch?: (control: ProcessControl) => () => void;
  /** Each chunk of stdout as it comes (the run's usage meter reads it while the process runs). */
  onStdout?: (chunk: Buffer) => void;
}

/**
 * What a watcher may do to the process group: `stop` as the timeout does (SIGTERM, SIGKILL after the grace,
 * or after `graceMs` when the watcher cannot wait that long: spend at its budget), `kill` at once (SIGKILL).
 * The reason ends the recorded output, as a line of Colony's.
 */
export interface ProcessControl {
  stop(reason: string, graceMs?: number): void;
  kill(reason: string): void;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  /** The end of stdout (≤ 1 MiB), secrets masked. */
  stdout: string;
  /** The last 8 KiB of stdout and stderr as they came, secrets masked. */
  tail: string;
  timedOut: boolean;
  /** The process could not be started (spawn error). */
  spawnError: string | null;
}

export interface RunningProcess {
  readonly pid: number | undefined;
  readonly done: Promise<ProcessResult>;
  kill(signal: NodeJS.Signals): void;
}

/**
 * A process that is still being prepared (its sandbox takes a moment): a kill before it starts is kept
 * and delivered the moment it does, so stopping an agent never races its launch.
 */
export class PendingProcess {
  private process: RunningProcess | null = null;
  killedWith: NodeJS.Signals | null = null;

  attach(p: RunningProcess): void {
    this.process = p;
    if (this.killedWith) p.kill(this.killedWith);
  }

  kill(signal: NodeJS.Signals): void {
    this.killedWith ??= signal;
    this.process?.kill(signal);
  }
}

export function launch(spec: LaunchSpec): RunningProcess {
  const startedAt = performance.now();
  const child = spawn(spec.file ?? '/bin/sh', spec.args ?? ['-c', spec.command], {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ['pipe', 'pipe', 'pipe', ...(spec.fds ?? [])],
    detached: true,
  });
  const { out, both } = wire(child, spec);
  let timedOut = false;
  let killer: NodeJS.Timeout | null = null;
  let killAt = Infinity;
  const stop = (graceMs = spec.killGraceMs ?? KILL_GRACE_MS) => {
    killGroup(child, 'SIGTERM');
    // A second stop with a shorter grace (the budget while the timeout's grace runs) brings the SIGKILL forward.
    if (performance.now() + graceMs >= killAt) return;
    killAt = performance.now() + graceMs;
    if (killer) clearTimeout(killer);
    killer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
    killer.unref();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    spec.onTimeout?.();
    stop();
  }, spec.timeoutSec * 1000);
  const notes: string[] = [];
  let settled = false;
  // A watcher's word after the process ended is nothing: its process group may be another's by then.
  const control =
    (act: (graceMs?: number) => void) =>
    (reason: string, graceMs?: number): void => {
      if (settled) return;
      notes.push(reason);
      act(graceMs);
    };
  const unwatch = spec.watch?.({ stop: control(stop), kill: control(() => killGroup(child, 'SIGKILL')) });
  const done = new Promise<ProcessResult>((resolve) => {
    const finish = (exitCode: number | null, signal: string | null, spawnError: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      unwatch?.();
      resolve({
        exitCode,
        signal,
        durationMs: Math.max(1, Math.round(performance.now() - startedAt)),
        timedOut,
        spawnError,
        stdout: redactOutput(out.buffer(), spec.secrets, STDOUT_KEEP_BYTES),
        tail: withNotes(redactOutput(both.buffer(), spec.secrets, OUTPUT_TAIL_BYTES), notes),
      });
    };
    // A command that cannot start emits 'error' and then maybe 'close': only the first counts.
    child.once('error', (err) => finish(null, null, err.message));
    child.once('close', (code, signal) => finish(code, signal, null));
  });
  return { pid: child.pid, done, kill: (signal) => killGroup(child, signal) };
}

/** Feeds the child its stdin and keeps the ends of its output: stdout alone, and stdout with stderr. */
function wire(child: ChildProcess, spec: LaunchSpec): { out: Tail; both: Tail } {
  const out = new Tail(STDOUT_KEEP_BYTES);
  const both = new Tail(OUTPUT_TAIL_BYTES);
  child.stdout!.on('data', (chunk: Buffer) => {
    out.push(chunk);
    both.push(chunk);
    spec.onStdout?.(chunk);
  });
  child.stderr!.on('data', (chunk: Buffer) => both.push(chunk));
  // A backend that exits without reading its prompt closes the pipe under us: that is not an error of the run.
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(spec.stdin);
  return { out, both };
}

/** Why Colony stopped the process, as its last lines (`colony: …`), within the tail's size. */
function withNotes(tail: string, notes: readonly string[]): string {
  if (notes.length === 0) return tail;
  const end = notes.map((n) => `\ncolony: ${n}`).join('');
  const bytes = Buffer.from(tail, 'utf8');
  const keep = Math.min(bytes.length, Math.max(0, OUTPUT_TAIL_BYTES - Buffer.byteLength(end)));
  return bytes.subarray(bytes.length - keep).toString('utf8') + end;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    /* already gone, or it never started */
  }
}

/** The last `max` bytes of a stream, kept without copying the whole stream each time. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0]!.length >= this.max)
      this.size -= this.chunks.shift()!.length;
  }

  buffer(): Buffer {
    const all = Buffer.concat(this.chunks);
    return all.length > this.max ? all.subarray(all.length - this.max) : all;
  }
}
