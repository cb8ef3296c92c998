import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { giveToSandbox } from '../sandbox-user.js';
import { SANDBOX_HOME } from './sandbox.js';

/**
 * The MCP client configuration a run can use as it is: `$COLONY_MCP_CONFIG` names a file in
 * the `.mcp.json` shape with this Colony's URL as the process sees it (inside the sandbox: its own
 * loopback gate) and the agent's own token, so `claude -p --mcp-config "$COLONY_MCP_CONFIG"` — or any
 * MCP-capable CLI that reads that shape — needs no other set-up. It lives in the agent's own home
 * (0700, mounted only into this agent's sandboxes) for the run's life only: removed when the run ends,
 * so no token stays on disk.
 *
 * The home is the agent's to write, so Colony — which writes here as the owner's user, outside any
 * sandbox — never follows what the agent may have planted: the file goes straight into the home (no
 * subdirectory the agent could swap for a symlink), under a random name, created exclusively and without
 * following a symlink (O_CREAT | O_EXCL | O_NOFOLLOW), mode 0600.
 */
export interface McpConfigFile {
  path: string;
  remove(): void;
}

export function writeMcpConfig(hostHome: string, env: NodeJS.ProcessEnv, token: string): McpConfigFile | null {
  const url = env.COLONY_URL;
  if (!url) return null;
  const name = `.colony-mcp-${randomBytes(12).toString('hex')}.json`;
  const hostPath = join(hostHome, name);
  const config = { mcpServers: { colony: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } } } };
  writeExclusive(hostPath, `${JSON.stringify(config, null, 2)}\n`);
  // Confined, the home is mounted at SANDBOX_HOME and HOME says so; unconfined, the process sees the host's path.
  const path = env.HOME === SANDBOX_HOME ? join(SANDBOX_HOME, name) : hostPath;
  return { path, remove: () => rmSync(hostPath, { force: true }) };
}

/** Creates `path` with `text`, mode 0600 — or throws (EEXIST) if anything, a symlink included, is already there. */
export function writeExclusive(path: string, text: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    giveToSandbox(fd); // the confined process runs as the sandbox's uid, and must read it
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
