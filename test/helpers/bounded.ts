import { spawn } from 'node:child_process';

/**
 * Runs a command to completion with no stdin and a hard time limit. The child leads its own process
 * group, so on time-out the whole group — a client and the stdio server it spawned — is SIGKILLed by
 * that group's id (while its leader still runs, so the id is still ours): a CI run without a terminal
 * never hangs on a client waiting for input.
 */
export interface BoundedResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

export function runBounded(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<BoundedResult> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out.stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (out.stderr += s));
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ...out, timedOut, ms: Math.round(performance.now() - started) });
    });
  });
}
