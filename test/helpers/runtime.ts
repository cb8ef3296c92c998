import type { TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { configureRuntime } from '../../src/actions/runs/agent-controls.js';
import { registerAgent } from '../../src/actions/principals.js';
import type { RuntimeOverrides } from '../../src/events/runs.js';
import { getUserByName } from '../../src/projections/principal-queries.js';
import { startRuntime, type Runtime } from '../../src/runtime/index.js';
import type { Reactor } from '../../src/runtime/reactor.js';
import { httpFixture, type HttpFixture } from './mcp-http.js';
import type { Clock } from '../../src/clock.js';

/**
 * A serving Colony with its runtime: real HTTP MCP endpoint, the reactor tailing the log, agents whose
 * backends are real shell commands (scripts in test/fixtures/agents or inline `sh`).
 */
export interface RuntimeFixture extends HttpFixture {
  runtime: Runtime;
  reactor: Reactor;
  ownerId: number;
  /** An agent with a backend command; cooldown 0 unless settings say otherwise. */
  addRunner(
    name: string,
    command: string,
    settings?: Partial<RuntimeOverrides>,
    extra?: { toolScope?: string[] },
  ): { agentId: number; token: string };
}

export async function runtimeFixture(
  options: { agentTools?: string[]; clock?: Clock; stallMs?: number } = {},
): Promise<RuntimeFixture> {
  const f = await httpFixture({ agentTools: options.agentTools, clock: options.clock });
  const runtime = startRuntime(f.app, {
    mcpUrl: `${f.base}/mcp`,
    pollMs: 50,
    killGraceMs: 500,
    stallMs: options.stallMs,
  });
  f.ctx.runtime.reactor = runtime.reactor;
  const ownerId = getUserByName(f.app.engine.db, 'owner')!.userId;
  const close = f.close.bind(f);
  return Object.assign(f, {
    runtime,
    reactor: runtime.reactor!,
    ownerId,
    addRunner(
      name: string,
      command: string,
      settings: Partial<RuntimeOverrides> = {},
      extra: { toolScope?: string[] } = {},
    ) {
      const a = registerAgent(
        f.app,
        {
          name,
          ownerId,
          model: 'scripted',
          systemPrompt: `You are ${name}, a scripted test agent.`,
          toolScope: extra.toolScope ?? ['whoami', 'send_message'],
          tier: 'autonomous',
          command,
          parentId: null,
          spawnDepth: 0,
        },
        { actor: 'user:owner' },
      );
      configureRuntime(f.app, ownerId, a.agentId, { cooldownSec: 0, ...settings }, 'owner', { actor: 'user:owner' });
      return { agentId: a.agentId, token: a.token };
    },
    async close() {
      runtime.stop();
      await close();
    },
  });
}

/** A runtime fixture closed after the test `t`, with a connected client of its owner. */
export async function runtimeWithOwner(t: TestContext): Promise<RuntimeFixture & { owner: Client }> {
  const f = await runtimeFixture();
  t.after(() => f.close());
  return Object.assign(f, { owner: await f.connect(f.ownerToken) });
}
