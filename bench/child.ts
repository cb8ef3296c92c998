import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * A server in a child process, for the figures measured from outside (bench/mcp-ext.ts): started, awaited
 * until a line on `stream` matches `ready`, and always stopped — by the caller's finally, and, should the
 * bench die first, by the exit hook below (SIGKILL: no child outlives the bench on a crash).
 */
export interface Child {
  /** The match of `ready` (e.g. the URL it listens on). */
  match: RegExpMatchArray;
  /** SIGTERM, then SIGKILL if it has not exited within 5 s. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

export async function startChild(
  args: readonly string[],
  ready: RegExp,
  stream: 'stdout' | 'stderr',
  env: NodeJS.ProcessEnv = {},
): Promise<Child> {
  // stdin stays an open pipe: the SDK baselines exit when it ends, i.e. when the bench is gone.
  const proc = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  live.add(proc);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => (live.delete(proc), resolve())));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    const kill = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(kill);
  };
  let tail = '';
  try {
    const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${ready}`)), 60_000);
      for (const s of ['stdout', 'stderr'] as const) {
        // Both streams are read to the end, always: a child blocked on a full pipe would stall its server.
        createInterface({ input: proc[s]! }).on('line', (line) => {
          tail = `${tail}${line}\n`.slice(-4000);
          const m = s === stream ? ready.exec(line) : null;
          if (m) {
            clearTimeout(timer);
            resolve(m);
          }
        });
      }
      void exited.then(() => (clearTimeout(timer), reject(new Error(`exited before ${ready}`))));
    });
    return { match, stop };
  } catch (e) {
    await stop();
    throw new Error(`${args.join(' ')}: ${(e as Error).message}\n${tail}`, { cause: e });
  }
}
