import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createBaselineServer } from './mcp-baseline.js';

/** The SDK minimal server over stdio (bench/mcp-baseline.ts), spawned by bench/mcp.ts like `colony stdio`. */
const transport = new StdioServerTransport();
await createBaselineServer().connect(transport);
process.stdin.once('end', () => process.exit(0));
