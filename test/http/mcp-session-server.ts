import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createOwner, registerAgent } from '../../src/actions/principals.js';
import { openApp, type App } from '../../src/app.js';
import { listen } from '../../src/http/server.js';
import { mountMcp, type McpOptions, type McpRoutes } from '../../src/http/mcp.js';
import { createMcpContext, type McpContext } from '../../src/mcp/context.js';
import { buildToolRegistry } from '../../src/mcp/tools/index.js';
import { tempDir } from '../../testkit/temp-dir.js';

/**
 * `/mcp` alone (mountMcp with the caps a test chooses) on a loopback port: real sockets, real SDK
 * clients, a real data dir. Principals are created on demand: `owner(name)` a tenant, `agent(name,
 * ownerId)` one of its agents (tool scope: whoami). Raw requests go through `initialize` and `post`.
 */
export interface SessionServer {
  app: App;
  ctx: McpContext;
  routes: McpRoutes;
  base: string;
  owner(name: string): { userId: number; token: string };
  agent(name: string, ownerId: number): { agentId: number; token: string };
  /** A raw initialize; resolves with the new session id. */
  initialize(token: string): Promise<string>;
  /** A raw JSON-RPC POST on a session; resolves with the HTTP status (the body is drained). */
  post(token: string, sessionId: string, body: unknown): Promise<number>;
  connect(token: string): Promise<Client>;
  close(): Promise<void>;
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
export const TOOLS_LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

export const headers = (token: string, sessionId?: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${token}`,
  'mcp-protocol-version': '2025-11-25',
  ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
});

export async function sessionServer(options: McpOptions = {}): Promise<SessionServer> {
  const scratch = tempDir('colony-mcp-sessions-');
  const app = openApp({ dataDir: scratch.dir, durability: 'normal' });
  const ctx = createMcpContext(app, buildToolRegistry());
  const http = express();
  const routes = mountMcp(http, ctx, options);
  const server: Server = await listen(http, '127.0.0.1', 0);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clients: Client[] = [];
  const names = new Map<number, string>();
  return {
    app,
    ctx,
    routes,
    base,
    owner(name) {
      const o = createOwner(app, name, { actor: 'system' });
      names.set(o.userId, name);
      return o;
    },
    agent(name, ownerId) {
      return registerAgent(
        app,
        {
          name,
          ownerId,
          model: 'test-model',
          systemPrompt: 'You do small, careful tasks.',
          toolScope: ['whoami'],
          tier: 'supervised',
          command: null,
          parentId: null,
          spawnDepth: 0,
        },
        { actor: `user:${names.get(ownerId)}` },
      );
    },
    async initialize(token) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: headers(token),
        body: JSON.stringify(INITIALIZE),
      });
      await res.arrayBuffer();
      const id = res.headers.get('mcp-session-id');
      if (res.status !== 200 || !id) throw new Error(`initialize answered ${res.status} without a session id`);
      return id;
    },
    async post(token, sessionId, body) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: headers(token, sessionId),
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      return res.status;
    },
    async connect(token) {
      const client = new Client({ name: 'session-test', version: '0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', base), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await routes.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      ctx.audit.close();
      app.engine.close();
      scratch.cleanup();
    },
  };
}
