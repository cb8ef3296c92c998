import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Runs the real `colony` CLI (bin/colony.js) as a separate process. */
export const COLONY_BIN = fileURLToPath(new URL('../../bin/colony.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function colony(args: readonly string[], env: NodeJS.ProcessEnv = {}, cwd?: string): CliResult {
  const r = spawnSync(process.execPath, [COLONY_BIN, ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, COLONY_DATA: '', ...env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface LiveCli {
  proc: ChildProcess;
  stdoutLines: string[];
  /** Resolves with the first stdout or stderr line matching `pattern`. */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr'): Promise<string>;
  /** Sends `signal` and, if the process is still alive after `killAfterMs`, SIGKILL. Resolves with the exit code. */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<number | null>;
}

/** Starts a long-running command (serve, tail --follow) and follows its output line by line. */
export function colonyLive(args: readonly string[], env: NodeJS.ProcessEnv = {}, cwd?: string): LiveCli {
  const proc = spawn(process.execPath, [COLONY_BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd,
    env: { ...process.env, COLONY_DATA: '', ...env },
  });
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  const waiters: { pattern: RegExp; stream: 'stdout' | 'stderr'; resolve(line: string): void }[] = [];
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  for (const stream of ['stdout', 'stderr'] as const) {
    createInterface({ input: proc[stream]! }).on('line', (line) => {
      lines[stream].push(line);
      for (const w of waiters.filter((x) => x.stream === stream && x.pattern.test(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    });
  }
  return {
    proc,
    stdoutLines: lines.stdout,
    waitFor(pattern, stream = 'stdout') {
      const seen = lines[stream].find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, stream, resolve });
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${pattern} on ${stream}; stderr: ${lines.stderr.join('\n')}`)),
          30_000,
        );
        void exited.then(() =>
          setTimeout(() => {
            clearTimeout(timer);
            reject(new Error(`exited before ${pattern}; stderr: ${lines.stderr.join('\n')}`));
          }, 50),
        );
      });
    },
    async stop(signal = 'SIGTERM', killAfterMs = 5_000) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const killer = setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
      try {
        return await exited;
      } finally {
        clearTimeout(killer);
      }
    },
  };
}
