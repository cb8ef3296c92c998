import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createOwner, registerAgent } from '../../src/actions/principals.js';
import { openApp, type App } from '../../src/app.js';
import { createHttpApp, listen } from '../../src/http/server.js';
import { Confirmations } from '../../src/mcp/confirm.js';
import { createMcpContext, type McpContext } from '../../src/mcp/context.js';
import type { ToolRegistry } from '../../src/mcp/registry.js';
import { buildToolRegistry } from '../../src/mcp/tools/index.js';
import type { Clock } from '../../src/clock.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * A real Colony HTTP server on a loopback port (real sockets, real SDK clients): an owner, an agent
 * with the given tool scope, and helpers to connect as either.
 */
export interface HttpFixture {
  app: App;
  ctx: McpContext;
  base: string;
  ownerToken: string;
  agentToken: string;
  agentId: number;
  connect(token: string): Promise<Client>;
  eventCount(): number;
  close(): Promise<void>;
}

export async function httpFixture(
  options: { agentTools?: string[]; tools?: ToolRegistry; now?: () => number; clock?: Clock } = {},
): Promise<HttpFixture> {
  const scratch = tempDir('colony-mcp-http-');
  const app = openApp({ dataDir: scratch.dir, clock: options.clock });
  const owner = createOwner(app, 'owner', { actor: 'system' });
  const agent = registerAgent(
    app,
    {
      name: 'worker',
      ownerId: owner.userId,
      model: 'test-model',
      systemPrompt: 'You do small, careful tasks.',
      toolScope: options.agentTools ?? ['whoami'],
      tier: 'supervised',
      command: null,
      parentId: null,
      spawnDepth: 0,
    },
    { actor: 'user:owner' },
  );
  const ctx = createMcpContext(app, options.tools ?? buildToolRegistry(), {
    confirmations: new Confirmations(options.now),
  });
  const http = createHttpApp(app.engine, ctx);
  const server: Server = await listen(http.app, '127.0.0.1', 0);
  const port = (server.address() as { port: number }).port;
  const base = `http://127.0.0.1:${port}`;
  const clients: Client[] = [];
  return {
    app,
    ctx,
    base,
    ownerToken: owner.token,
    agentToken: agent.token,
    agentId: agent.agentId,
    async connect(token) {
      const client = new Client({ name: 'http-test', version: '0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', base), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      return client;
    },
    eventCount: () => app.engine.head().position,
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await http.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      ctx.audit.close();
      app.engine.close();
      scratch.cleanup();
    },
  };
}
