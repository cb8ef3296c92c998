import { registerAgent } from '../src/actions/principals.js';
import type { App } from '../src/app.js';
import type { CommandOptions } from '../src/engine/handle.js';

/**
 * An agent with nothing but a name — model `m`, supervised, scope `claim_task`, no command, no parent —
 * for tests and benchmarks that need writes of a realistic size (one registration: a few events over
 * several projections) rather than a particular agent.
 */
export function plainAgent(
  app: App,
  ownerId: number,
  name: string,
  by: CommandOptions = { actor: 'user:owner' },
): ReturnType<typeof registerAgent> {
  return registerAgent(
    app,
    {
      name,
      ownerId,
      model: 'm',
      systemPrompt: 'Work.',
      toolScope: ['claim_task'],
      tier: 'supervised',
      command: null,
      parentId: null,
      spawnDepth: 0,
    },
    by,
  );
}
