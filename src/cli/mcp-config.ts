/**
 * The `.mcp.json` snippet that connects Claude Code (or any MCP client) to this Colony, over HTTP and
 * over stdio. The token is referenced as ${COLONY_TOKEN} (expanded by the client), never written out.
 */
export function mcpJsonSnippet(url: string, dataDir: string): string {
  const config = {
    mcpServers: {
      colony: { type: 'http', url, headers: { Authorization: 'Bearer ${COLONY_TOKEN}' } },
      'colony-stdio': {
        type: 'stdio',
        command: 'npx',
        args: ['colony', 'stdio', '--data', dataDir],
        env: { COLONY_TOKEN: '${COLONY_TOKEN}' },
      },
    },
  };
  return JSON.stringify(config, null, 2);
}
