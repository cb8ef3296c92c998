import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { WHOAMI_CONFIG, whoamiAnswer } from './mcp-baseline.js';
import type { Endpoint } from './mcp-baseline-http.js';
import { closeServer } from './serve.js';

/**
 * The baseline of the 2026-07-28 HTTP figures: the SDK v2's minimal stateless server — createMcpHandler
 * with a fresh McpServer per request (the factory) and `legacy: 'reject'` (modern traffic only, as on
 * Colony's modern leg), mounted with toNodeHandler on bare node:http. Its one tool is the v1 baseline's
 * `whoami` (bench/mcp-baseline.ts): same schemas, same constant identity, so the client and the load
 * generator see answers of the same shape and size from both SDKs and from Colony.
 */
export function createBaselineServerV2(): McpServer {
  const server = new McpServer({ name: 'sdk-baseline-v2', version: '0.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('whoami', WHOAMI_CONFIG, whoamiAnswer);
  return server;
}

export async function statelessBaselineHttp(): Promise<Endpoint> {
  const handler = createMcpHandler(() => createBaselineServerV2(), { legacy: 'reject' });
  const server = createServer(toNodeHandler(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    async close() {
      await handler.close();
      await closeServer(server);
    },
  };
}
