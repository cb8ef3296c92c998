/**
 * The `command` runtime's baseline for bench/runtimes.ts (in testkit/: mounted into the sandbox): an agent program that does what the CLI runs
 * there do — connect to Colony with $COLONY_MCP_CONFIG, call whoami once, print a final line — with no
 * model in between, so the wake → first MCP call figure of a real CLI has its floor measured beside it.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const { url, headers } = JSON.parse(readFileSync(process.env.COLONY_MCP_CONFIG, 'utf8')).mcpServers.colony;
const client = new Client({ name: 'bench-first-call', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
await client.callTool({ name: 'whoami', arguments: {} });
await client.close();
process.stdout.write('done\n');
