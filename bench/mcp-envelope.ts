import { Client, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';

/**
 * The exact HTTP request an SDK v2 client pinned to the 2026-07-28 revision sends for `tools/call whoami`
 * (headers and body, with its per-request `_meta` envelope), captured by wrapping the client's fetch
 * while it talks to `url` — so the load generator replays what a real modern client sends, and follows
 * the SDK when that changes, instead of a hand-written guess.
 */
export const MODERN = '2026-07-28';

export interface CapturedRequest {
  /** Lower-case names, without the ones the load generator writes itself (host, content-length). */
  headers: Record<string, string>;
  body: string;
}

export async function captureModernCall(url: string): Promise<CapturedRequest> {
  let captured: CapturedRequest | undefined;
  const spy: FetchLike = async (input, init) => {
    const body = typeof init?.body === 'string' ? init.body : '';
    if (init?.method === 'POST' && (JSON.parse(body || '{}') as { method?: string }).method === 'tools/call') {
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => {
        if (name !== 'host' && name !== 'content-length') headers[name] = value;
      });
      captured = { headers, body };
    }
    return fetch(input, init);
  };
  const client = new Client({ name: 'colony-bench', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: spy }));
  try {
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    if (result.isError || !captured) throw new Error(`the v2 client's whoami failed: ${JSON.stringify(result)}`);
    return captured;
  } finally {
    await client.close();
  }
}
