import { serveStdio as serveBothRevisions } from '@modelcontextprotocol/server/stdio';
import { DomainError } from '../errors.js';
import { tokenHash } from '../tokens.js';
import type { McpContext } from './context.js';
import { createMcpServer } from './server.js';
import { FastCallStdio } from './stdio-fast-call.js';

/**
 * MCP over stdio: the token comes from COLONY_TOKEN; stdout carries the protocol only (logs go to
 * stderr). The SDK's serveStdio picks the revision from the opening message — a 2025-era `initialize`
 * or a 2026-07-28 `server/discover` / enveloped request — and pins one server from our factory for the
 * connection. The token is re-checked on every call, so revoking it ends the session's rights at once.
 */
export async function serveStdio(ctx: McpContext, token: string | undefined): Promise<void> {
  const caller = ctx.auth.authenticate(token);
  if (!caller || !token) throw new DomainError('ErrUnauthorized', 'COLONY_TOKEN is missing, unknown or revoked');
  // One token for the connection's lifetime: hashed once, looked up (and re-checked) on every call.
  const hash = tokenHash(token);
  const current = () => ctx.auth.authenticateHash(hash);
  const handle = serveBothRevisions(
    ({ era }) => createMcpServer(ctx, current, { pushResourceUpdates: era === 'modern', tasks: era === 'modern' }),
    // Plain tools/call on a 2025-era connection are answered by Colony directly (stdio-fast-call.ts).
    { transport: new FastCallStdio(ctx, current) },
  );
  // The transport closes itself when stdin ends (the client went away); the process then winds down.
  await new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await handle.close();
}
