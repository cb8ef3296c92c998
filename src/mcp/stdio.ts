import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { DomainError } from '../errors.js';
import type { McpContext } from './context.js';
import { createMcpServer } from './server.js';

/**
 * MCP over stdio: the token comes from COLONY_TOKEN; stdout carries the protocol only (logs go to
 * stderr). The token is re-checked on every call, so revoking it ends the session's rights at once.
 */
export async function serveStdio(ctx: McpContext, token: string | undefined): Promise<void> {
  const caller = ctx.auth.authenticate(token);
  if (!caller) throw new DomainError('ErrUnauthorized', 'COLONY_TOKEN is missing, unknown or revoked');
  const server = createMcpServer(ctx, () => ctx.auth.authenticate(token));
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.close();
}
