import { DEFAULT_CHECKPOINT_EVENTS, DEFAULT_CHECKPOINT_MINUTES, parseCheckpointSetting } from '../config.js';
import { CliError } from './shared.js';

/** The options of `colony serve`, some shared with `colony stdio`, and how they are read. */
export interface ServeOptions {
  host: string;
  port?: string;
  owner: string;
  acceptBrokenChain?: boolean;
  sandbox: string;
  autoApprove?: boolean;
  checkpointEvents?: string;
  checkpointMinutes?: string;
}

/** Shared with `colony stdio`: the override of the start-up chain check (src/evidence/chain-check.ts). */
export const ACCEPT_HELP =
  'start even though the start-up chain check fails: record the break in the log (ChainBreakAccepted), re-anchor the log at its real end and rebuild every projection from it';

export const SANDBOX_HELP =
  'on (the default; $COLONY_SANDBOX): every agent run and command verifier runs in a Bubblewrap sandbox, or is refused where that is impossible; off: they run unconfined (announced, and recorded with every run)';

export function sandboxSwitch(raw: string): 'on' | 'off' {
  if (raw !== 'on' && raw !== 'off') throw new CliError(`--sandbox must be on or off, not "${raw}"`);
  return raw;
}

export interface CheckpointSettings {
  everyEvents: number;
  everyMinutes: number;
}

export function checkpointSettings(opts: ServeOptions): CheckpointSettings {
  return {
    everyEvents: parseCheckpointSetting('--checkpoint-events', opts.checkpointEvents, DEFAULT_CHECKPOINT_EVENTS),
    everyMinutes: parseCheckpointSetting('--checkpoint-minutes', opts.checkpointMinutes, DEFAULT_CHECKPOINT_MINUTES),
  };
}
