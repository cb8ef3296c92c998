import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

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

/** `colony ARGS` that must succeed (exit 0); returns its stdout. */
export function colonyOk(args: readonly string[], env: NodeJS.ProcessEnv = {}): string {
  const r = colony(args, env);
  assert.equal(r.code, 0, `colony ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Asserts that `text` is one line (a trailing newline aside). */
export const oneLine = (text: string): void =>
  assert.equal(text.trim().split('\n').length, 1, `expected one line, got: ${text}`);

/** The position of the last event of a data dir's log (0 when it is empty), read through its own read-only connection. */
export function logHead(dataDir: string): number {
  const db = new Database(join(dataDir, 'colony.db'), { readonly: true });
  try {
    return (db.prepare('SELECT coalesce(max(position), 0) AS n FROM es_events').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * `colony ARGS --data DIR` that must be refused: exit 1, one line on stderr matching `pattern`, no stack
 * trace, nothing appended to the log. Returns the result for checks of the caller's own.
 */
export function colonyFails(dataDir: string, args: readonly string[], pattern: RegExp): CliResult {
  const label = args.join(' ');
  const before = logHead(dataDir);
  const r = colony([...args, '--data', dataDir]);
  assert.equal(r.code, 1, `${label} should fail with exit 1: ${r.stdout}${r.stderr}`);
  oneLine(r.stderr);
  assert.match(r.stderr.trimEnd(), pattern, label);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.equal(logHead(dataDir), before, `${label} appended nothing`);
  return r;
}

/**
 * A real MCP client of `colony stdio --data DIR` as the holder of `token` (started in `cwd` when given);
 * the caller closes it.
 */
export async function stdioClient(
  dataDir: string,
  token: string,
  cwd?: string,
  env: NodeJS.ProcessEnv = {},
): Promise<Client> {
  const client = new Client({ name: 'colony-stdio-test', version: '0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [COLONY_BIN, 'stdio', '--data', dataDir],
      ...(cwd ? { cwd } : {}),
      env: { ...process.env, COLONY_TOKEN: token, COLONY_DATA: '', ...env } as Record<string, string>,
      stderr: 'pipe',
    }),
  );
  return client;
}

export interface LiveCli {
  proc: ChildProcess;
  stdoutLines: string[];
  stderrLines: string[];
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
    stderrLines: lines.stderr,
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
