import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This checkout's CLI entry, by absolute path: what a client spawns, from whatever directory it runs in. */
export const COLONY_ENTRY = fileURLToPath(new URL('../../bin/colony.js', import.meta.url));

/**
 * The `.mcp.json` snippet that connects Claude Code (or any MCP client) to this Colony, over HTTP and
 * over stdio. The token is referenced as ${COLONY_TOKEN} (expanded by the client), never written out.
 * The stdio server is named by absolute paths — this Node and this checkout's bin/colony.js — never by a
 * bare package name: outside the checkout `npx colony` resolves an unrelated public npm package of that
 * name and offers to install and run it.
 */
export function mcpJsonSnippet(url: string, dataDir: string): string {
  const config = {
    mcpServers: {
      colony: { type: 'http', url, headers: { Authorization: 'Bearer ${COLONY_TOKEN}' } },
      'colony-stdio': {
        type: 'stdio',
        command: process.execPath,
        args: [COLONY_ENTRY, 'stdio', '--data', resolve(dataDir)],
        env: { COLONY_TOKEN: '${COLONY_TOKEN}' },
      },
    },
  };
  return JSON.stringify(config, null, 2);
}
