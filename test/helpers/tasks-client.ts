import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  type RawClientDispatch,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';

/**
 * A real requester of the MCP tasks extension (2026-07-28, SEP-2663) against a Colony on loopback: the
 * official SDK v2 Client pinned to the revision, wrapped by @modelcontextprotocol/ext-tasks'
 * createTaskSessionFromClient. The SDK Client cannot carry task wire shapes itself (it refuses a
 * `resultType: "task"`), so the library asks its host for a raw request path: `rawDispatch` here is that
 * host — plain JSON-RPC POSTs to /mcp with the bearer token and the standard headers, reading a JSON or
 * an SSE answer. The library frames the requests (envelope, tasks capability, Mcp-Name).
 */
export const MODERN = '2026-07-28';
const CLIENT_INFO = { name: 'tasks-test', version: '0' };

export interface TasksClient {
  client: Client;
  session: TaskEnabledSession;
  /** One raw JSON-RPC request, framed by the caller (for what the library never sends: no capability, a made-up id). */
  raw: (
    method: string,
    params: Record<string, unknown>,
    headers?: Record<string, string>,
  ) => Promise<{ status: number; message: RawMessage }>;
  close(): Promise<void>;
}
export type RawMessage = {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** The per-request envelope of 2026-07-28, with the tasks extension declared or not. */
export const envelope = (tasks: boolean): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
});

let ids = 0;

async function post(
  base: string,
  token: string,
  body: { method: string; params?: unknown },
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<{ status: number; message: RawMessage }> {
  const id = `raw-${(ids += 1)}`;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const params = body.params as { name?: unknown; taskId?: unknown } | undefined;
  const name =
    typeof params?.name === 'string' ? params.name : typeof params?.taskId === 'string' ? params.taskId : undefined;
  const res = await fetch(new URL('/mcp', base), {
    method: 'POST',
    signal,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': body.method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
      ...lower,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, ...body }),
  });
  const text = await res.text();
  const messages = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as RawMessage & { id?: unknown })
    : [JSON.parse(text) as RawMessage & { id?: unknown }];
  const message = messages.find((m) => m.id === id) ?? messages.at(-1);
  if (!message) throw new Error(`no answer to ${body.method} (HTTP ${res.status}): ${text.slice(0, 300)}`);
  return { status: res.status, message };
}

export async function tasksClient(base: string, token: string): Promise<TasksClient> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const rawDispatch: RawClientDispatch = async (request, options) => {
    const { message } = await post(
      base,
      token,
      request as { method: string },
      options?.context?.headers as Record<string, string> | undefined,
      options?.signal,
    );
    return message.error
      ? { kind: 'error', error: message.error as never }
      : { kind: 'result', result: message.result as never };
  };
  const session = createTaskSessionFromClient(client, {
    endpointId: `colony-test-${base}`,
    rawDispatch,
    v2RequestFraming: { protocolVersion: MODERN, clientInfo: CLIENT_INFO, clientCapabilities: {} },
  });
  return {
    client,
    session,
    raw: (method, params, headers) => post(base, token, { method, params }, headers),
    async close() {
      await session.close();
      await client.close();
    },
  };
}
