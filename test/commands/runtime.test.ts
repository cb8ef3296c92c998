import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runtimeDecider, type RuntimeCommand } from '../../src/commands/runtime.js';
import type { RuntimeEvent } from '../../src/events/runs.js';
import { NO_SANDBOX_OVERRIDES, type SandboxOverrides } from '../../src/events/sandbox.js';
import { spec } from '../helpers/decider-spec.js';

/**
 * The runtime decider's disk quota (`colony agents runtime NAME --disk MB`): a whole number of MB ≥ 1, null
 * for the default; settings recorded before the quota existed (no diskMb) read as the default, and are never
 * rewritten by a change that changes nothing.
 */
const sandbox = (changes: Record<string, unknown>): RuntimeCommand => ({
  type: 'ConfigureSandbox',
  agentId: 3,
  changes,
  by: 'user-1',
});
// As recorded before the disk quota: every key but diskMb.
const { diskMb: _none, ...before } = { ...NO_SANDBOX_OVERRIDES, memoryMb: 256 };
const old: RuntimeEvent = {
  type: 'SandboxConfigured',
  data: { agentId: 3, settings: before as SandboxOverrides, by: 'user-1' },
};
const configured = (settings: SandboxOverrides): RuntimeEvent => ({
  type: 'SandboxConfigured',
  data: { agentId: 3, settings, by: 'user-1' },
});

describe('runtime decider: the disk quota', () => {
  it('sets it, resets it to the default, and refuses anything but a whole number ≥ 1', () => {
    spec(runtimeDecider)
      .given([])
      .when(sandbox({ diskMb: 20 }))
      .then([configured({ ...NO_SANDBOX_OVERRIDES, diskMb: 20 })]);
    spec(runtimeDecider)
      .given([configured({ ...NO_SANDBOX_OVERRIDES, diskMb: 20 })])
      .when(sandbox({ diskMb: null }))
      .then([configured(NO_SANDBOX_OVERRIDES)]);
    for (const bad of [0, -5, 1.5]) {
      const e = spec(runtimeDecider)
        .given([])
        .when(sandbox({ diskMb: bad }))
        .thenThrows('ErrInvalidInput');
      assert.deepEqual(e.details, { field: 'diskMb' });
    }
  });

  it('settings recorded without diskMb read as the default: a change keeps the rest, no change writes nothing', () => {
    spec(runtimeDecider)
      .given([old])
      .when(sandbox({ diskMb: 5 }))
      .then([configured({ ...NO_SANDBOX_OVERRIDES, memoryMb: 256, diskMb: 5 })]);
    spec(runtimeDecider)
      .given([old])
      .when(sandbox({ memoryMb: 256 }))
      .thenNothingHappened();
    spec(runtimeDecider)
      .given([old])
      .when(sandbox({ diskMb: null }))
      .thenNothingHappened();
  });
});
