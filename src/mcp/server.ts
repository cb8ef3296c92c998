import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from './auth.js';
import { callTool, visibleTools } from './call.js';
import type { McpContext } from './context.js';
import { inputJsonSchema, outputJsonSchema } from './results.js';
import { annotationsFor, type AnyTool } from './tool.js';

/**
 * One MCP server per connection or session (the SDK binds a server to one transport). It lists the tools
 * the caller may see and routes every call through `callTool`. `currentCaller` is asked on every list and
 * call: over HTTP it is the principal of that request's bearer token, over stdio the token is re-checked.
 */
export const INSTRUCTIONS =
  'Colony is the control plane for this team of agents. Every change you make is recorded as an event. ' +
  'Tools marked destructive answer first with a confirm_token; call again with confirmation_token to proceed.';

export function createMcpServer(ctx: McpContext, currentCaller: (extra: { authInfo?: { extra?: Record<string, unknown> } }) => Caller | null): Server {
  const server = new Server({ name: 'colony', version: ctx.version }, { capabilities: { tools: {}, logging: {} }, instructions: INSTRUCTIONS });
  // Listed for the caller as it is now (re-checked like a call): a scope changed by the owner shows at the next tools/list.
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const current = currentCaller(extra);
    return { tools: current ? visibleTools(ctx, current).map(listEntry) : [] };
  });
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(ctx, currentCaller(extra), request.params.name, request.params.arguments ?? {}, request.params._meta));
  return server;
}

const listCache = new WeakMap<AnyTool, Tool>();

function listEntry(tool: AnyTool): Tool {
  let entry = listCache.get(tool);
  if (!entry) {
    const output = outputJsonSchema(tool);
    entry = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputJsonSchema(tool) as Tool['inputSchema'],
      ...(output ? { outputSchema: output as Tool['outputSchema'] } : {}),
      annotations: annotationsFor(tool),
    };
    listCache.set(tool, entry);
  }
  return entry;
}
