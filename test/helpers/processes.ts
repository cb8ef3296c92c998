import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * The parent's side of the multi-process tests: starts a TypeScript script (test/helpers/writer-process.ts,
 * or a test file in its child mode) under tsx and follows its stdout line by line.
 */
export const WRITER_SCRIPT = fileURLToPath(new URL('./writer-process.ts', import.meta.url));

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Child {
  readonly proc: ChildProcess;
  /** Every stdout line so far. */
  readonly lines: string[];
  /** Resolves once `line` was printed (now or earlier); rejects if the child ends without printing it. */
  waitForLine(line: string): Promise<void>;
  /** Resolves after the child ended and its output was read. */
  readonly exit: Promise<Exit>;
  stderr(): string;
  send(line: string): void;
}

export function spawnWriter(args: readonly string[]): Child {
  return spawnScript(WRITER_SCRIPT, args);
}

/** Starts `node --import tsx SCRIPT ARGS` with piped stdio. */
export function spawnScript(script: string, args: readonly string[]): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiting = new Map<string, Array<() => void>>();
  let err = '';
  let ended = false;
  const failures: Array<(e: Error) => void> = [];
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const resolve of waiting.get(line) ?? []) resolve();
    waiting.delete(line);
  });
  // Writing to stdin of a child that was killed raises EPIPE on the stream; that is expected here.
  proc.stdin!.on('error', () => {});
  const exit = new Promise<Exit>((resolve) => {
    proc.on('close', (code, signal) => {
      ended = true;
      for (const fail of failures)
        fail(new Error(`the child ended (code ${code}, signal ${signal}) before printing the line; stderr:\n${err}`));
      resolve({ code, signal });
    });
  });
  return {
    proc,
    lines,
    exit,
    stderr: () => err,
    send: (line) => void proc.stdin!.write(`${line}\n`),
    waitForLine(line) {
      if (lines.includes(line)) return Promise.resolve();
      if (ended) return Promise.reject(new Error(`the child ended before printing ${line}; stderr:\n${err}`));
      return new Promise((resolve, reject) => {
        waiting.set(line, [...(waiting.get(line) ?? []), resolve]);
        failures.push(reject);
      });
    },
  };
}
