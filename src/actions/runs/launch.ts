import type { App } from '../../app.js';
import { runDecider } from '../../commands/runs.js';
import type { CommandOptions } from '../../engine/handle.js';
import { runStream } from '../../events/runs.js';
import type { SandboxProfile } from '../../events/sandbox.js';

const SYSTEM: CommandOptions = { actor: 'system' };

/**
 * What the runner records while an agent's process lives: that it launched (and under which
 * confinement), and that it ran out of time. The run's end is finishRun / failRun (runs.ts).
 */
export function launchRun(app: App, runId: number, sandbox: SandboxProfile, actor: CommandOptions = SYSTEM): void {
  app.engine.handle(runDecider, runStream(runId), { type: 'LaunchRun', sandbox }, actor);
}

export function timeOutRun(app: App, runId: number, timeoutSec: number, actor: CommandOptions = SYSTEM): void {
  app.engine.handle(runDecider, runStream(runId), { type: 'TimeOutRun', timeoutSec }, actor);
}
