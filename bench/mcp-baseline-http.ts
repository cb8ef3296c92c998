import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { listen } from '../src/http/server.js';
import { createBaselineServer } from './mcp-baseline.js';
import { closeServer } from './serve.js';

/**
 * The SDK's (v1) minimal stateful Streamable HTTP server: one McpServer + transport per session, the
 * shape of the SDK's own example. The baseline of the 2025-11-25 HTTP figures, in process (bench/mcp.ts)
 * and in a child process of its own (bench/mcp-baseline-child.ts).
 */
export interface Endpoint {
  url: string;
  close(): Promise<void>;
}

export async function baselineHttp(json = false): Promise<Endpoint> {
  const app = createMcpExpressApp();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  app.post('/mcp', async (req: Request, res: Response) => {
    const sid = req.header('mcp-session-id');
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (sid || !isInitializeRequest(req.body))
        return void res
          .status(400)
          .json({ jsonrpc: '2.0', error: { code: -32000, message: 'no valid session' }, id: null });
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      created.onclose = () => void (created.sessionId && transports.delete(created.sessionId));
      await createBaselineServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, req.body);
  });
  const onSession = async (req: Request, res: Response) => {
    const transport = transports.get(req.header('mcp-session-id') ?? '');
    if (!transport)
      return void res
        .status(400)
        .json({ jsonrpc: '2.0', error: { code: -32000, message: 'no valid session' }, id: null });
    await transport.handleRequest(req, res);
  };
  app.get('/mcp', onSession);
  app.delete('/mcp', onSession);
  const server = await listen(app, '127.0.0.1', 0);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close()));
      await closeServer(server);
    },
  };
}

/**
 * The SDK's (v1) minimal stateless Streamable HTTP server in JSON mode: no sessions, a fresh McpServer and
 * transport per request (the SDK's own stateless example), `enableJsonResponse` so an answer is one JSON
 * body, not an SSE stream. The anchor of Colony's stateless calls (bench/mcp-ext.ts).
 */
export async function statelessJsonBaselineHttp(): Promise<Endpoint> {
  const app = createMcpExpressApp();
  app.post('/mcp', async (req: Request, res: Response) => {
    const server = createBaselineServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const server = await listen(app, '127.0.0.1', 0);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => closeServer(server),
  };
}
