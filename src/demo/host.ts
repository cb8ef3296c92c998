import type { Server } from 'node:http';
import type { Subscription } from 'rxjs';
import { configureRuntime } from '../actions/runs/agent-controls.js';
import { createOwner, registerAgent } from '../actions/principals.js';
import { addRecipe } from '../actions/verifiers.js';
import { openApp, type App } from '../app.js';
import type { RuntimeOverrides } from '../events/runs.js';
import { createHttpApp, listen, type HttpApp } from '../http/server.js';
import { log } from '../log.js';
import { createMcpContext, type McpContext } from '../mcp/context.js';
import { buildToolRegistry } from '../mcp/tools/index.js';
import { startRuntime, type Runtime } from '../runtime/index.js';
import type { Reactor } from '../runtime/reactor.js';
import { type CommandOptions } from '../engine/handle.js';

/**
 * The Colony the demo runs in: a fresh data dir, the owner "demo-owner", the coordinator agent whose
 * backend is the doc-gardener runner, an HTTP MCP endpoint on a free loopback port and the runtime
 * (reactor, command verifiers, lease sweeper) — what `colony serve` runs, in this process.
 */
export const DEMO_OWNER = 'demo-owner';
export const COORDINATOR_TOOLS = [
  'whoami',
  'get_goal',
  'list_goals',
  'propose_task_tree',
  'propose_agent',
  'send_message',
  'read_inbox',
  'get_channel_messages',
  'search_messages',
  'complete_goal',
  'claim_task',
  'complete_task',
  'report_usage',
];
/** No cooldown between an agent's runs (the demo's wake-ups come in quick chains); a hung run ends after 4 minutes. */
const DEMO_RUNTIME: Partial<RuntimeOverrides> = { cooldownSec: 0, timeoutSec: 240 };

export interface DemoHost {
  app: App;
  ownerId: number;
  ownerToken: string;
  coordinatorId: number;
  mcpUrl: string;
  runtime: Runtime;
  reactor: Reactor;
  stop(): Promise<void>;
}

export interface DemoRecipe {
  name: string;
  command: string;
  timeoutSec: number;
}

export async function startHost(
  dataDir: string,
  coordinator: { name: string; prompt: string; command: string },
  recipes: readonly DemoRecipe[] = [],
): Promise<DemoHost> {
  const app = openApp({ dataDir, durability: 'normal' });
  const actor: CommandOptions = { actor: `user:${DEMO_OWNER}` };
  const owner = createOwner(app, DEMO_OWNER, { actor: 'system' });
  const agent = registerAgent(
    app,
    {
      name: coordinator.name,
      ownerId: owner.userId,
      model: 'scripted (doc-gardener, no LLM)',
      systemPrompt: coordinator.prompt,
      toolScope: COORDINATOR_TOOLS,
      tier: 'autonomous',
      command: coordinator.command,
      parentId: null,
      spawnDepth: 0,
    },
    actor,
  );
  configureRuntime(app, owner.userId, agent.agentId, DEMO_RUNTIME, DEMO_OWNER, actor);
  // The owner's verifier recipes: the only commands the goal's verifiers may run (what `colony verifiers add` records).
  const ownerSpeaker = { key: `user-${owner.userId}`, name: DEMO_OWNER, tenant: owner.userId };
  for (const r of recipes)
    addRecipe(
      app,
      ownerSpeaker,
      { name: r.name, command: r.command, cwd: null, writable: false, timeoutSec: r.timeoutSec, secrets: [] },
      actor,
    );
  const spawned = configureSpawned(app, owner.userId, actor);
  const mcp = createMcpContext(app, buildToolRegistry());
  const http = createHttpApp(app.engine, mcp, '127.0.0.1');
  let server: Server | null = null;
  try {
    server = await listen(http.app, '127.0.0.1', 0);
    const mcpUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
    const runtime = startRuntime(app, { mcpUrl, pollMs: 100, killGraceMs: 2_000 });
    mcp.runtime.reactor = runtime.reactor;
    return {
      app,
      ownerId: owner.userId,
      ownerToken: owner.token,
      coordinatorId: agent.agentId,
      mcpUrl,
      runtime,
      reactor: runtime.reactor!,
      stop: () => shutdown({ app, mcp, http, server, runtime, spawned }),
    };
  } catch (e) {
    await shutdown({ app, mcp, http, server, runtime: null, spawned });
    throw e;
  }
}

/** Agents the coordinator spawns get the demo's runtime settings as soon as they exist (the owner's command, recorded). */
function configureSpawned(app: App, ownerId: number, actor: CommandOptions): Subscription {
  return app.engine.bus.events$.subscribe((e) => {
    const d = e.data as { agentId?: number; ownerId?: number; parentId?: number | null };
    if (e.type !== 'AgentRegistered' || d.ownerId !== ownerId || d.parentId === null || d.agentId === undefined) return;
    // After the commit that created it, outside the bus callback (rule 8: side effects after commit).
    setImmediate(() => {
      try {
        if (app.engine.db.open) configureRuntime(app, ownerId, d.agentId!, DEMO_RUNTIME, DEMO_OWNER, actor);
      } catch (err) {
        log.warn({ err, agentId: d.agentId }, 'demo: could not configure a spawned agent');
      }
    });
  });
}

async function shutdown(h: {
  app: App;
  mcp: McpContext;
  http: HttpApp;
  server: Server | null;
  runtime: Runtime | null;
  spawned: Subscription;
}): Promise<void> {
  h.spawned.unsubscribe();
  h.runtime?.stop();
  await h.http.close();
  if (h.server) {
    const closed = new Promise<void>((resolve) => h.server!.close(() => resolve()));
    h.server.closeAllConnections();
    await closed;
  }
  h.mcp.audit.close();
  h.app.engine.close();
}
