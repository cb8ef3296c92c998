import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOX_HOME } from './sandbox.js';

/**
 * The MCP client configuration a run can use as it is (issue 15): `$COLONY_MCP_CONFIG` names a file in
 * the `.mcp.json` shape with this Colony's URL as the process sees it (inside the sandbox: its own
 * loopback gate) and the agent's own token, so `claude -p --mcp-config "$COLONY_MCP_CONFIG"` — or any
 * MCP-capable CLI that reads that shape — needs no other set-up. It lives in the agent's own home
 * (mode 0600; the home is 0700 and mounted only into this agent's sandboxes) for the run's life only:
 * removed when the run ends, so no token stays on disk.
 */
export interface McpConfigFile { path: string; remove(): void }

export function writeMcpConfig(hostHome: string, runId: number, env: NodeJS.ProcessEnv, token: string): McpConfigFile | null {
  const url = env.COLONY_URL;
  if (!url) return null;
  const dir = join(hostHome, '.colony');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = `mcp-run-${runId}.json`;
  const hostPath = join(dir, name);
  const config = { mcpServers: { colony: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } } } };
  writeFileSync(hostPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  // Confined, the home is mounted at SANDBOX_HOME and HOME says so; unconfined, the process sees the host's path.
  const path = env.HOME === SANDBOX_HOME ? join(SANDBOX_HOME, '.colony', name) : hostPath;
  return { path, remove: () => rmSync(hostPath, { force: true }) };
}
