import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A test-only reverse proxy on loopback that adds `Authorization: Bearer TOKEN` to every request and
 * forwards it, streaming both ways (SSE included), to a Colony listening on loopback. It exists for
 * clients that cannot send a header — the official conformance suite's server mode has no auth option —
 * so they can be run against the real, authenticated `/mcp` without an auth-less endpoint in Colony.
 *
 * Everything else passes through untouched, the Host header included: Colony still sees what the client
 * sent (its DNS-rebinding check is exercised through the proxy). A client's own Authorization header is
 * replaced.
 */
export interface AuthProxy {
  /** http://127.0.0.1:PORT — append the path (e.g. /mcp). */
  url: string;
  /** Requests forwarded so far. */
  readonly forwarded: number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers))
    if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
  return out;
}

/**
 * Rewrites one JSON-RPC request on its way in (tests that map a suite's fixture tool onto a Colony tool):
 * returns the new body, or undefined to forward it untouched. Mcp-Name follows a rewritten tools/call.
 */
export type Rewrite = (message: Record<string, unknown>) => Record<string, unknown> | undefined;

async function rewritten(
  req: IncomingMessage,
  rewrite: Rewrite,
): Promise<{ headers: IncomingHttpHeaders; data: Buffer }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const data = Buffer.concat(chunks);
  let message: Record<string, unknown>;
  try {
    message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { headers: req.headers, data };
  }
  const next = rewrite(message);
  if (!next) return { headers: req.headers, data };
  const out = Buffer.from(JSON.stringify(next));
  const name = (next.params as { name?: unknown } | undefined)?.name;
  return {
    headers: {
      ...req.headers,
      'content-length': String(out.length),
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    data: out,
  };
}

export async function startAuthProxy(target: string, token: string, rewrite?: Rewrite): Promise<AuthProxy> {
  const upstream = new URL(target);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(upstream.hostname))
    throw new Error(`the auth proxy only forwards to loopback, not ${upstream.hostname}`);
  let forwarded = 0;
  const server: Server = createServer((req, res) => {
    forwarded++;
    if (rewrite && req.method === 'POST')
      return void rewritten(req, rewrite).then(
        (r) => forward(req, res, r),
        () => res.writeHead(400).end(),
      );
    forward(req, res, null);
  });
  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    body: { headers: IncomingHttpHeaders; data: Buffer } | null,
  ) => {
    const out = request(
      {
        hostname: upstream.hostname.replace(/^\[|\]$/g, ''),
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...endToEnd(body?.headers ?? req.headers), authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    out.on('error', (e) => {
      if (!res.headersSent)
        res
          .writeHead(502, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: `proxy: ${e.message}` }));
      else res.destroy();
    });
    // The client went away (e.g. it closed an SSE stream): end the upstream exchange too.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    if (body) out.end(body.data);
    else req.pipe(out);
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get forwarded() {
      return forwarded;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
