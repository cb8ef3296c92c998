import type { Runtime } from '../../events/principals.js';
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { opencode } from './opencode.js';
import type { RuntimeAdapter } from './types.js';

/** The adapters by runtime; `command` has none (the owner's line runs as it is: runner.ts). */
const ADAPTERS: Record<Exclude<Runtime, 'command'>, RuntimeAdapter> = {
  'claude-code': claudeCode,
  codex,
  opencode,
};

export const adapterFor = (runtime: Runtime | null): RuntimeAdapter | null =>
  runtime === null || runtime === 'command' ? null : ADAPTERS[runtime];

export const allAdapters = (): RuntimeAdapter[] => Object.values(ADAPTERS);

export type { RuntimeAdapter } from './types.js';
