import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { App } from '../src/app.js';
import { createHttpApp, listen } from '../src/http/server.js';
import { createMcpContext } from '../src/mcp/context.js';
import { buildToolRegistry } from '../src/mcp/tools/index.js';
import type { AuditLog } from '../src/mcp/audit.js';

/** Colony's HTTP surface (the app `colony serve` mounts: /health, /mcp, /api) over an open App, on a loopback port. */
export interface Served {
  base: string;
  /** The tool calls' audit trail: when each call reached Colony. */
  audit: AuditLog;
  close(): Promise<void>;
}

export async function serveColony(app: App): Promise<Served> {
  const mcp = createMcpContext(app, buildToolRegistry());
  const http = createHttpApp(app.engine, mcp, '127.0.0.1');
  const server = await listen(http.app, '127.0.0.1', 0);
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    audit: mcp.audit,
    async close() {
      await http.close();
      await closeServer(server);
      mcp.audit.close();
    },
  };
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
