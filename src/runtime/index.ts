import type { App } from '../app.js';
import { ActivityLog } from './activity-log.js';
import { AutoApprover } from './auto-approver.js';
import { LeaseSweeper } from './leases.js';
import { Reactor } from './reactor.js';
import type { RunnerOptions } from './runner.js';
import { CommandVerifier } from './verifier.js';
import { Confiner, sandboxDefault, type SandboxSwitch } from './confine.js';
import { closeInheritedDescriptors } from './inherited-fds.js';

/**
 * The side effects a Colony process runs after commit: command verifiers, the lease sweeper and — when
 * it serves HTTP, so agents have an MCP endpoint to call back (COLONY_URL) — the reactor that runs agents.
 */
export interface Runtime {
  verifier: CommandVerifier;
  leases: LeaseSweeper;
  reactor: Reactor | null;
  confiner: Confiner;
  stop(): void;
}

export interface RuntimeOptions {
  sweepIntervalMs?: number;
  mcpUrl?: string;
  pollMs?: number;
  killGraceMs?: number;
  /** Confinement of every process started: on unless the owner opts out (`serve --sandbox off`, COLONY_SANDBOX=off). */
  sandbox?: SandboxSwitch;
  /** Log runs, decisions and budget alerts at info (activity-log.ts): `colony serve`'s operator log. */
  activityLog?: boolean;
  /** `serve --auto-approve`: approve this owner's pending proposals as soon as they are seen (auto-approver.ts). */
  autoApprove?: { ownerId: number };
  /** A draft goal's stall time (goal-stalls.ts); COLONY_GOAL_STALL_SEC, 120 s by default. */
  stallMs?: number;
  /** Told how each run's meter ended (run-meter.ts): the bench times a budget's stop with it. */
  onMeterEnd?: RunnerOptions['onMeterEnd'];
}

export function startRuntime(app: App, options: RuntimeOptions = {}): Runtime {
  closeInheritedDescriptors();
  const confiner = new Confiner(app, { sandbox: options.sandbox ?? sandboxDefault(), mcpUrl: options.mcpUrl ?? null });
  const verifier = new CommandVerifier(app, confiner).start();
  const leases = new LeaseSweeper(app, options.sweepIntervalMs).start();
  const reactor = options.mcpUrl
    ? new Reactor(app, {
        mcpUrl: options.mcpUrl,
        pollMs: options.pollMs,
        killGraceMs: options.killGraceMs,
        stallMs: options.stallMs,
        onMeterEnd: options.onMeterEnd,
        confiner,
      }).start()
    : null;
  const activity = options.activityLog ? new ActivityLog(app).start() : null;
  const approver = options.autoApprove ? new AutoApprover(app, options.autoApprove.ownerId).start() : null;
  return {
    verifier,
    leases,
    reactor,
    confiner,
    stop: () => {
      approver?.stop();
      activity?.stop();
      reactor?.stop();
      verifier.stop();
      leases.stop();
    },
  };
}
