import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The attacker's tool for check-then-use races: swaps two names atomically (renameat2 with
 * RENAME_EXCHANGE) in a tight loop — typically a real directory and a symlink pointing outside — until
 * stopped. An agent in its sandbox can do exactly this to its own workspace while Colony works on it.
 * Node has no renameat2, so the loop is a few lines of Python calling glibc (or the raw syscall).
 */
const LOOP = `
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
try:
    swap = lambda: libc.renameat2(-100, a, -100, b, 2)
    swap(); swap()
except AttributeError:
    swap = lambda: libc.syscall(316, -100, a, -100, b, 2)
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
print("swapping", flush=True)
n = 0
while not stop:
    if swap() == 0:
        n += 1
if n % 2:
    swap()
`;

export interface Swapper {
  /** Stops the loop and leaves the two names as they were before it started (an even number of swaps). */
  stop(): Promise<void>;
}

const python = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => existsSync(p)) ?? 'python3';

/** Starts swapping `a` and `b` (both must exist); resolves once the loop runs. */
export async function startSwapping(a: string, b: string): Promise<Swapper> {
  const child: ChildProcess = spawn(python, ['-c', LOOP, a, b], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the swapper ended early (${code})`)));
    child.stdout!.once('data', () => resolve());
  });
  return {
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
