import assert from 'node:assert/strict';
import { registerAgent } from '../../src/actions/principals.js';
import { configureRuntime } from '../../src/actions/runs/agent-controls.js';
import { finishRun, requestRun, startQueuedRun } from '../../src/actions/runs.js';
import type { App } from '../../src/app.js';

/**
 * Runs that ended, recorded as the runner records them (no process): for tests of what the owner sees of
 * an agent's runs — the attention list, the console. The agent has a command, so it can be woken, and no
 * cooldown, so runs follow each other at once.
 */
const OWNER = { actor: 'user:owner' };

export function runnableAgent(app: App, name: string, ownerId = 1): number {
  const { agentId } = registerAgent(
    app,
    {
      name,
      ownerId,
      model: 'test-model',
      systemPrompt: 'You run.',
      toolScope: ['whoami'],
      tier: 'supervised',
      command: 'true',
      parentId: null,
      spawnDepth: 0,
    },
    OWNER,
  );
  configureRuntime(app, ownerId, agentId, { cooldownSec: 0 }, `user-${ownerId}`, OWNER);
  return agentId;
}

/** A manual run of the agent that ended `status`; a failure with the cause `auth` and `reason`. Its run id. */
export function finishedRun(
  app: App,
  agentId: number,
  status: 'failed' | 'succeeded',
  reason: string | null = null,
): number {
  const q = requestRun(app, { agentId, source: 'manual', by: 'user-1', prompt: 'Go.' });
  assert.equal(q.kind, 'queued');
  assert.ok(startQueuedRun(app, q.run.runId));
  finishRun(app, q.run.runId, {
    status,
    exitCode: status === 'failed' ? 1 : 0,
    signal: null,
    durationMs: 10,
    tokensIn: 0,
    tokensOut: 0,
    costCents: 0,
    outputTail: '',
    agentText: null,
    ...(status === 'failed' ? { cause: 'auth', reason } : {}),
  });
  return q.run.runId;
}
