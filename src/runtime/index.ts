import type { App } from '../app.js';
import { LeaseSweeper } from './leases.js';
import { Reactor } from './reactor.js';
import { CommandVerifier } from './verifier.js';

/**
 * The side effects a Colony process runs after commit: command verifiers, the lease sweeper and — when
 * it serves HTTP, so agents have an MCP endpoint to call back (COLONY_URL) — the reactor that runs agents.
 */
export interface Runtime { verifier: CommandVerifier; leases: LeaseSweeper; reactor: Reactor | null; stop(): void }

export interface RuntimeOptions { sweepIntervalMs?: number; mcpUrl?: string; pollMs?: number; killGraceMs?: number }

export function startRuntime(app: App, options: RuntimeOptions = {}): Runtime {
  const verifier = new CommandVerifier(app).start();
  const leases = new LeaseSweeper(app, options.sweepIntervalMs).start();
  const reactor = options.mcpUrl ? new Reactor(app, { mcpUrl: options.mcpUrl, pollMs: options.pollMs, killGraceMs: options.killGraceMs }).start() : null;
  return { verifier, leases, reactor, stop: () => { reactor?.stop(); verifier.stop(); leases.stop(); } };
}
