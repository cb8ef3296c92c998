import type { App } from '../app.js';
import { LeaseSweeper } from './leases.js';
import { CommandVerifier } from './verifier.js';

/** The side effects a serving Colony process runs after commit: command verifiers and the lease sweeper. */
export interface Runtime { verifier: CommandVerifier; leases: LeaseSweeper; stop(): void }

export function startRuntime(app: App, options: { sweepIntervalMs?: number } = {}): Runtime {
  const verifier = new CommandVerifier(app).start();
  const leases = new LeaseSweeper(app, options.sweepIntervalMs).start();
  return { verifier, leases, stop: () => { verifier.stop(); leases.stop(); } };
}
