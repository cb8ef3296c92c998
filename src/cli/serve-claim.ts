import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeHolder, liveHolder, requestHandover, tryLock, withdrawHandover, type DataLock } from './data-lock.js';
import { CliError } from './shared.js';

/**
 * What `colony serve` claims before it writes anything: its port and the data directory's lock. A serve
 * that cannot have both says why in one line and leaves no trace: no data dir made, no owner, no token lost.
 */
export interface Claim {
  /** Null on a PostgreSQL store: its nodes share the data dir (the keys), and the tenant's leadership decides who runs the jobs. */
  lock: DataLock | null;
  /** Lets the port go, for the HTTP server to bind it at once. */
  freePort(): Promise<void>;
}

export async function claimForServe(dataDir: string, host: string, port: number, local: boolean): Promise<Claim> {
  // An existing data dir is locked first: a second serve on it names the first, whatever port it asked for.
  let lock = local && existsSync(dataDir) ? await lockForServe(dataDir) : null;
  let probe: Server | null = null;
  try {
    probe = await holdPort(host, port);
    // A fresh data dir is made only now that the port is ours (on PostgreSQL it keeps the keys).
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (local) lock ??= await lockForServe(dataDir);
  } catch (e) {
    probe?.close();
    lock?.release();
    throw e;
  }
  let held = probe;
  return {
    lock,
    freePort: () =>
      new Promise<void>((resolve) => {
        const server = held;
        held = null;
        if (server) server.close(() => resolve());
        else resolve();
      }),
  };
}

/**
 * Binds the port (nothing is served on it) so a taken one is known before anything is written, and no
 * other process takes it while Colony starts; port 0 asks for any free port, which needs no check.
 */
function holdPort(host: string, port: number): Promise<Server | null> {
  if (port === 0) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new CliError(
          err.code === 'EADDRINUSE'
            ? `${host}:${port} is already in use`
            : `cannot listen on ${host}:${port}: ${err.message}`,
        ),
      ),
    );
    server.listen({ host, port, exclusive: true }, () => resolve(server));
  });
}

/** How long a serve waits for a `colony stdio` holding the lock to stop its jobs and hand it over. */
const HANDOVER_WAIT_MS = 5_000;

/**
 * The lock, or a refusal naming its holder. Another serve keeps it (one serve per data dir); a `colony
 * stdio` hands it over (it goes on serving its client, without the jobs: stdio-jobs.ts).
 */
async function lockForServe(dataDir: string): Promise<DataLock> {
  const deadline = Date.now() + HANDOVER_WAIT_MS;
  try {
    for (;;) {
      const lock = tryLock(dataDir, 'serve');
      if (lock) return lock;
      const holder = liveHolder(dataDir);
      if (holder?.role === 'serve' || Date.now() >= deadline)
        throw new CliError(
          `${dataDir} is in use by ${describeHolder(holder)}: one colony serve per data directory — stop it first, or give this one another --data`,
        );
      if (holder?.role === 'stdio') requestHandover(dataDir);
      await sleep(100);
    }
  } finally {
    withdrawHandover(dataDir);
  }
}
