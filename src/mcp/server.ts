import { Server, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import type { CurrentCaller } from './auth.js';
import { callTool } from './call.js';
import { visibleTools } from './views/visible-tools.js';
import type { McpContext } from './context.js';
import { inputJsonSchema, outputJsonSchema } from './results.js';
import { registerResourcesAndPrompts } from './server-resources.js';
import { declaresTasks, registerTasks, tasksCapability } from './tasks/index.js';
import { annotationsFor, noProgress, type AnyTool, type Progress } from './tool.js';

/**
 * One MCP server per serving unit — a 2025-era session, one stateless 2026-07-28 request, one stdio
 * connection — built by the same factory for both protocol revisions (SDK v2 serves both from it), so a
 * tool means the same thing whichever revision carried the call. It lists the tools the caller may see
 * and routes every call through `callTool`. `currentCaller` is asked on every list and call: over HTTP it
 * is the principal of that request's bearer token, over stdio the token is re-checked.
 */
export const INSTRUCTIONS =
  'Colony is the control plane for this team of agents. Every change you make is recorded as an event. ' +
  'Tools marked destructive answer first with a confirm_token; call again with confirmation_token to proceed.';

/**
 * Cache hints for the 2026-07-28 revision's cacheable lists: the tool list depends on the caller (its
 * scope), so it is private to the client, and an owner may change a scope at any moment — a short TTL
 * keeps a client from re-listing on every call without hiding a scope change for long.
 */
const LIST_CACHE = { ttlMs: 60_000, cacheScope: 'private' } as const;
/** Resources are live views of the log (a task changes, the tree changes): never served from a cache. */
const NO_CACHE = { ttlMs: 0, cacheScope: 'private' } as const;

export interface ServerOptions {
  /**
   * Announce every change to a resource the caller may read as the server's own notification (a stdio
   * connection on 2026-07-28: the SDK's stdio entry routes them onto the open `subscriptions/listen`
   * streams, filtered by each stream's filter). Over HTTP the listen streams have their own bus.
   */
  pushResourceUpdates?: boolean;
  /**
   * A 2026-07-28 server: it advertises the tasks extension and serves tasks/* (src/mcp/tasks), and a long
   * call whose request declares the extension answers with a task. A 2025-era session has no tasks.
   */
  tasks?: boolean;
}

export function createMcpServer(ctx: McpContext, currentCaller: CurrentCaller, options: ServerOptions = {}): Server {
  const server = new Server(
    { name: 'colony', version: ctx.version },
    {
      capabilities: {
        tools: {},
        resources: { subscribe: true, listChanged: true },
        prompts: {},
        logging: {},
        ...(options.tasks ? tasksCapability : {}),
      },
      instructions: INSTRUCTIONS,
      cacheHints: {
        'tools/list': LIST_CACHE,
        'prompts/list': LIST_CACHE,
        'resources/templates/list': LIST_CACHE,
        'resources/list': NO_CACHE,
        'resources/read': NO_CACHE,
        'server/discover': LIST_CACHE,
      },
    },
  );
  // Listed for the caller as it is now (re-checked like a call), sorted by name so every page and every
  // revision sees the same order: a scope changed by the owner shows at the next tools/list.
  server.setRequestHandler('tools/list', (_request, extra) => {
    const current = currentCaller(extra);
    return { tools: current ? visibleTools(ctx, current).map(listEntry) : [] };
  });
  server.setRequestHandler(
    'tools/call',
    (request, extra) =>
      callTool(
        ctx,
        currentCaller(extra),
        request.params.name,
        request.params.arguments ?? {},
        request.params._meta,
        progressOf(request.params._meta, extra),
        options.tasks === true && declaresTasks(extra.mcpReq.envelope),
      ) as Promise<CallToolResult>,
  ); // a CreateTaskResult passes the SDK through (resultType "task")
  registerResourcesAndPrompts(server, ctx, currentCaller, options.pushResourceUpdates ?? false);
  if (options.tasks) registerTasks(server, ctx, currentCaller);
  return server;
}

/**
 * MCP progress notifications for a call that asked for them (`_meta.progressToken`): each step a tool
 * reports becomes `notifications/progress` on that request's stream, numbered in order. A step the
 * client can no longer receive (it went away) is dropped — progress is advice, never the result.
 */
function progressOf(
  meta: Record<string, unknown> | undefined,
  extra: { mcpReq: { notify(n: { method: string; params?: Record<string, unknown> }): Promise<void> } },
): Progress {
  const token = meta?.progressToken;
  if (typeof token !== 'string' && typeof token !== 'number') return noProgress;
  let step = 0;
  return (message) =>
    void extra.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken: token, progress: ++step, message } })
      .catch(() => undefined);
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
      ...(tool.meta ? { _meta: { ...tool.meta } } : {}),
    };
    listCache.set(tool, entry);
  }
  return entry;
}
