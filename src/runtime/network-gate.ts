import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import {
  createServer as httpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { connect, isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowList } from '../events/sandbox.js';
import { log } from '../log.js';
import { sandboxOwner } from '../sandbox-user.js';

/**
 * A confined run's way out of its empty network namespace (network `none` or `allow`): one Unix socket
 * in a private directory mounted into the sandbox, served here by an HTTP server that (1) passes
 * origin-form requests (`POST /mcp`) on to Colony's own MCP endpoint and (2), for `allow`, tunnels
 * CONNECT to the hosts on the run's allow-list (TLS to host:443 unless an entry names another port);
 * everything else is 403. Inside, one socat listener puts it on 127.0.0.1:7070 (confine.ts), which is
 * both COLONY_URL and HTTPS_PROXY. The trade-off: only clients that honour HTTPS_PROXY reach the allowed
 * hosts (LLM CLIs do), there is no DNS inside, and nothing else leaves — not even the host's loopback.
 */
export const DEFAULT_ALLOW_HOSTS = [
  'api.anthropic.com',
  'statsig.anthropic.com',
  'api.openai.com',
  'generativelanguage.googleapis.com',
];
export const GATE_SOCKET = 'gate.sock';
/** The only paths of Colony a confined run may call through its gate. */
export const GATE_PATHS: ReadonlySet<string> = new Set(['/mcp', '/health']);

/**
 * The request target a run may send through its gate, exactly as it is checked and forwarded: a path of
 * GATE_PATHS (and a query), already in normal form — else null. Colony's router sees the raw target, so a
 * target whose normal form is `/mcp` but which is written otherwise (`/api/x/../../mcp`, `%2e%2e`
 * segments, backslashes, `//host/mcp`, a fragment) would be checked as one path and routed as another; it
 * is refused, not rewritten. A target that does not parse (`//[`) is refused too, never thrown (it used
 * to throw out of the request handler and take the whole process down).
 */
export function gateTarget(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw, 'http://gate');
  } catch {
    return null;
  }
  const normal = url.pathname + url.search;
  return normal === raw && url.host === 'gate' && GATE_PATHS.has(url.pathname) ? normal : null;
}

/**
 * A message's end-to-end headers: the hop-by-hop ones (Connection, those it names, Keep-Alive, Upgrade…)
 * describe one connection, not the next, so a proxy drops them (RFC 9110 §7.6.1). Passed on, a run's
 * `Connection: close` closed the gate's pooled connection to Colony under the next request (answered 400),
 * and an SSE answer's `Connection: keep-alive` held the run's socket open after the answer.
 */
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const hop = new Set([...HOP_BY_HOP, ...named]);
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !hop.has(name)));
}
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'upgrade'];

export function defaultAllowHosts(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env.COLONY_NETWORK_ALLOW;
  return raw === undefined || raw.trim() === ''
    ? [...DEFAULT_ALLOW_HOSTS]
    : allowList(raw.split(','), 'COLONY_NETWORK_ALLOW');
}

export function allowed(list: readonly string[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return list.some((entry) => {
    const [name, p] = entry.includes(':')
      ? [entry.slice(0, entry.lastIndexOf(':')), Number(entry.slice(entry.lastIndexOf(':') + 1))]
      : [entry, 443];
    if (p !== port) return false;
    return name.startsWith('*.') ? h.endsWith(name.slice(1)) && h.length > name.length - 1 : h === name;
  });
}

export class RunSockets {
  readonly dir: string;
  private readonly server: HttpServer;
  denied = 0;

  private constructor(
    private readonly mcp: URL,
    private readonly allowHosts: readonly string[] | null,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'colony-run-'));
    this.server = httpServer((req, res) => this.toColony(req, res));
    this.server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => this.tunnel(req, client, head));
  }

  /** Opens the gate of one run; `allowHosts` null: Colony only (network `none`). */
  static async open(mcp: URL, allowHosts: readonly string[] | null): Promise<RunSockets> {
    const s = new RunSockets(mcp, allowHosts);
    try {
      await new Promise<void>((resolve, reject) => {
        s.server.once('error', reject);
        s.server.listen(join(s.dir, GATE_SOCKET), () => resolve());
      });
      // Confined processes run as the sandbox's uid: the directory (Colony's own, 0700) and its socket are theirs to reach.
      const owner = sandboxOwner();
      if (owner) for (const p of [s.dir, join(s.dir, GATE_SOCKET)]) chownSync(p, owner.uid, owner.gid);
      return s;
    } catch (e) {
      s.close();
      throw e;
    }
  }

  /**
   * Origin-form requests are the run's MCP calls: passed on to Colony as they are (streams included) —
   * `/mcp` only. The rest of Colony's HTTP surface is not the agent's: the OAuth endpoints would let a
   * run start an authorization as a look-alike client and collect the code, or make Colony fetch a
   * metadata document from any host (a way out of `none`); the console and REST are for people.
   */
  private toColony(req: IncomingMessage, res: ServerResponse): void {
    if (!req.url?.startsWith('/')) {
      this.refuse(req.url ?? '');
      res
        .writeHead(403, { 'content-type': 'text/plain' })
        .end('Colony: plain-HTTP proxying is not allowed; only CONNECT to allowed hosts\n');
      return;
    }
    const path = gateTarget(req.url);
    if (path === null) {
      this.refuse(req.url);
      res.writeHead(403, { 'content-type': 'text/plain' }).end('Colony: a run reaches only /mcp through its gate\n');
      return;
    }
    const upstream = httpRequest(
      {
        host: this.mcp.hostname.replace(/^\[|\]$/g, ''),
        port: Number(this.mcp.port || 80),
        method: req.method,
        path,
        headers: { ...endToEnd(req.headers), host: this.mcp.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  private tunnel(req: IncomingMessage, client: Duplex, head: Buffer): void {
    const target = req.url ?? '';
    const at = target.lastIndexOf(':');
    const host = target.slice(0, at);
    const port = Number(target.slice(at + 1));
    if (
      !this.allowHosts ||
      at < 1 ||
      !Number.isInteger(port) ||
      !allowed(this.allowHosts, host, port) ||
      (isIP(host) === 0 && !/^[a-z0-9.-]+$/i.test(host))
    ) {
      this.refuse(target);
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nColony: ${target} is not on this agent's network allow-list\n`,
      );
      return;
    }
    const upstream = connect(port, host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', () => {
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      drop();
    });
    client.on('error', drop);
  }

  private refuse(target: string): void {
    this.denied += 1;
    log.info({ target }, 'sandboxed run: connection outside its allow-list refused');
  }

  close(): void {
    this.server.close();
    this.server.closeAllConnections();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
