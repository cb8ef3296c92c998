import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createOwner, registerAgent, type AgentSpec } from '../../src/actions/principals.js';
import { openApp, type App } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { authenticate } from '../../src/mcp/auth.js';
import { createMcpContext, type McpContext } from '../../src/mcp/context.js';
import type { ToolRegistry } from '../../src/mcp/registry.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { buildToolRegistry } from '../../src/mcp/tools/index.js';

/**
 * A Colony MCP server on a fresh temp data dir, reached through the real SDK `Client` over
 * InMemoryTransport — the same path (auth, scope, schema validation, audit, handler) a real client takes.
 * `connect` lists the tools first, so the Client also validates every structuredContent against the
 * advertised outputSchema (it only does so for tools it has listed).
 */
export interface AgentOptions extends Partial<Omit<AgentSpec, 'ownerId'>> {
  /** Defaults to the fixture's owner. */
  ownerId?: number;
}

export interface McpFixture {
  app: App;
  ctx: McpContext;
  dataDir: string;
  owner: { userId: number; name: string; token: string };
  ownerToken: string;
  /** A root agent `worker` whose tool scope is every agent-surface tool of the registry. */
  agent: { agentId: number; name: string; token: string };
  agentToken: string;
  /** Registers another agent (defaults: the fixture owner, every agent-surface tool, supervised, no command). */
  addAgent(name: string, options?: AgentOptions): { agentId: number; name: string; token: string };
  /** Creates another owner (a second tenant) and returns its token. */
  addOwner(name: string): { userId: number; name: string; token: string };
  /** A connected Client for this token; closed by `close()`. */
  connect(token: string): Promise<Client>;
  close(): Promise<void>;
}

export interface McpFixtureOptions {
  registry?: ToolRegistry;
  clock?: Clock;
  ownerName?: string;
  /** Options for the default agent `worker`. */
  agent?: AgentOptions;
  /** Sees every tool result of every client `connect` made (to keep a transcript of them). */
  onToolResult?: (result: unknown) => void;
}

export async function mcpFixture(options: McpFixtureOptions = {}): Promise<McpFixture> {
  const dataDir = mkdtempSync(join(tmpdir(), 'colony-mcp-'));
  const app = openApp({ dataDir, durability: 'normal', clock: options.clock });
  const registry = options.registry ?? buildToolRegistry();
  const ctx = createMcpContext(app, registry);
  const agentTools = registry
    .list()
    .filter((t) => t.surface === 'agent')
    .map((t) => t.name);
  const clients: Client[] = [];

  const addOwner = (name: string) => {
    const { userId, token } = createOwner(app, name, { actor: 'system' });
    return { userId, name, token };
  };
  const owner = addOwner(options.ownerName ?? 'owner');
  const addAgent = (name: string, o: AgentOptions = {}) => {
    const ownerId = o.ownerId ?? owner.userId;
    return registerAgent(
      app,
      {
        name,
        ownerId,
        model: o.model ?? 'test-model',
        systemPrompt: o.systemPrompt ?? `You are ${name}.`,
        toolScope: o.toolScope ?? agentTools,
        tier: o.tier ?? 'supervised',
        command: o.command ?? null,
        parentId: o.parentId ?? null,
        spawnDepth: o.spawnDepth ?? 0,
      },
      { actor: `user:${owner.name}` },
    );
  };
  const agent = addAgent(options.agent?.name ?? 'worker', options.agent);

  const connect = async (token: string): Promise<Client> => {
    const caller = authenticate(app, token);
    if (!caller) throw new Error('mcpFixture.connect: the token does not authenticate');
    const server = createMcpServer(ctx, () => authenticate(app, token));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'colony-test', version: '0.0.0' });
    await client.connect(clientSide);
    await client.listTools();
    if (options.onToolResult) watchResults(client, options.onToolResult);
    clients.push(client);
    return client;
  };

  const close = async () => {
    for (const c of clients.splice(0)) await c.close();
    ctx.audit.close();
    app.engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  };

  return {
    app,
    ctx,
    dataDir,
    owner,
    ownerToken: owner.token,
    agent,
    agentToken: agent.token,
    addAgent,
    addOwner,
    connect,
    close,
  };
}

/** Makes `client` hand every tool result it gets to `seen` too (to keep a transcript of them); returns it. */
export function watchResults(client: Client, seen: (result: unknown) => void): Client {
  const callTool = client.callTool.bind(client);
  client.callTool = (async (...args: Parameters<Client['callTool']>) => {
    const result = await callTool(...args);
    seen(result);
    return result;
  }) as Client['callTool'];
  return client;
}

/**
 * What the call helpers need of a client: the SDK's Client (either major version), or a wrapper that
 * forwards `callTool` to one.
 */
export interface ToolClient {
  callTool(params: {
    name: string;
    arguments?: Record<string, unknown>;
    _meta?: Record<string, unknown>;
  }): Promise<unknown>;
}

/**
 * Calls a tool and returns the result, its first text block, and its body: structuredContent or, failing
 * that, the text's JSON (`{text}` when the text is not JSON). `meta` is the call's `_meta`.
 */
export async function callTool(
  client: ToolClient,
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
): Promise<{ result: CallToolResult; body: Record<string, unknown>; text: string }> {
  const result = (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
  const text = textOf(result);
  const body = (result.structuredContent ?? safeJson(text)) as Record<string, unknown>;
  return { result, body, text };
}

/** The first text block of a result. */
export const textOf = (result: CallToolResult): string =>
  (result.content.find((c) => c.type === 'text') as { text?: string } | undefined)?.text ?? '';

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}
