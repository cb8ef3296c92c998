import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Identity } from '../src/mcp/tools/principals.js';

/**
 * The baseline of the MCP benchmarks: the SDK's own minimal server with one trivial tool, `whoami`,
 * answering a constant identity of the same shape and size as Colony's (same output schema, same
 * strict empty input), so the client does the same work against both and the ratio shows what Colony
 * adds per call: authentication, the caller re-check, the audit row, its own validation and results.
 */
export const BASELINE_IDENTITY = {
  kind: 'owner',
  id: 1,
  name: 'owner',
  token_id: 1,
  scopes: ['mcp', 'api'],
  tool_scope: null,
  quarantined: false,
};

/** The one trivial tool of both SDK baselines (v1 here, v2 in mcp-baseline-v2.ts): same schemas, same answer. */
export const WHOAMI_CONFIG = {
  title: 'Who am I',
  description: 'Returns a constant identity.',
  inputSchema: z.strictObject({}),
  outputSchema: Identity,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};
export const whoamiAnswer = () => ({
  content: [{ type: 'text' as const, text: JSON.stringify(BASELINE_IDENTITY) }],
  structuredContent: BASELINE_IDENTITY,
});

export function createBaselineServer(): McpServer {
  const server = new McpServer({ name: 'sdk-baseline', version: '0.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('whoami', WHOAMI_CONFIG, whoamiAnswer);
  return server;
}
