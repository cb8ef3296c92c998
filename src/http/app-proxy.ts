import { request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { Request, Response } from 'express';
import { validPort } from '../commands/webapps.js';
import { servedPort } from '../public-url.js';

/**
 * The reverse proxy of a `port` web app: `/apps/<id>/<path>` → `http://127.0.0.1:<port>/<path>` (the
 * prefix stripped, as xylocopa's preview proxy does). The host is a constant: nothing in the request —
 * Host header, absolute-form request line, a path like `//elsewhere/` — can choose another one, and the
 * port is the registered one, never Colony's own. Credentials never travel: Authorization, Cookie and
 * proxy headers are dropped on the way in, Set-Cookie on the way out.
 */
/** A proxied app needs its own requests (fetch, module scripts), forms and popups; it still runs in an opaque origin. */
export const PORT_CSP =
  "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads; frame-ancestors 'self'";

/**
 * Headers on every answer under /apps. The wildcard CORS header is what lets an opaque-origin page load
 * its own module scripts and data; it exposes nothing the URL holder could not fetch anyway, as these
 * responses never depend on credentials.
 */
export const APP_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Access-Control-Allow-Origin': '*',
} as const;

export interface ProxyTarget {
  appId: string;
  port: number;
  path: string;
  /**
   * The owner presented the port, or the agent that did still listens on the host's loopback (network
   * host or sandbox off: actions/webapps/loopback.ts). Else the port is some other service of the host.
   */
  presenterOnLoopback: boolean;
}

const LOOPBACK = '127.0.0.1';
const TIMEOUT_MS = 60_000;
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'];
const REQUEST_DROP = new Set([
  ...HOP_BY_HOP,
  'host',
  'authorization',
  'proxy-authorization',
  'cookie',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-prefix',
  'x-real-ip',
]);
const RESPONSE_DROP = new Set([
  ...HOP_BY_HOP,
  'proxy-authenticate',
  'set-cookie',
  'access-control-allow-origin',
  'access-control-allow-credentials',
]);

export function proxyToLoopback(req: Request, res: Response, t: ProxyTarget): void {
  // Checked again here, not only when presented: a bad row, or the port this very socket arrived on.
  if (!validPort(String(t.port)) || t.port === req.socket.localPort || t.port === servedPort())
    return forbidden(res, 'this port is not proxied');
  if (!t.presenterOnLoopback)
    return forbidden(
      res,
      "the agent that presented this port runs in a network of its own: the port is not its server on this host's loopback",
    );
  const path = `/${t.path.replace(/^\/+/, '')}`; // origin-form with exactly one leading slash: never a host
  const upstream = request(
    {
      host: LOOPBACK,
      port: t.port,
      family: 4,
      method: req.method,
      path,
      headers: forwarded(req.headers, t),
      agent: false,
      timeout: TIMEOUT_MS,
    },
    (up) => {
      res.status(up.statusCode ?? 502);
      for (const [name, value] of Object.entries(up.headers)) {
        if (value === undefined || RESPONSE_DROP.has(name) || connectionListed(up.headers, name)) continue;
        res.setHeader(name, name === 'location' ? relocated(String(value), t) : value);
      }
      const theirs = up.headers['content-security-policy'];
      res
        .set(APP_HEADERS)
        .setHeader('Content-Security-Policy', [...(theirs === undefined ? [] : [theirs].flat()), PORT_CSP]); // policies only add up
      up.pipe(res);
    },
  );
  upstream.on('timeout', () => upstream.destroy(Object.assign(new Error('upstream timed out'), { code: 'ETIMEDOUT' })));
  upstream.on('error', (e: NodeJS.ErrnoException) => {
    if (res.headersSent) return void res.destroy();
    const timedOut = e.code === 'ETIMEDOUT';
    res
      .status(timedOut ? 504 : 502)
      .set(APP_HEADERS)
      .json({
        error: {
          code: timedOut ? 'ErrGatewayTimeout' : 'ErrBadGateway',
          message: timedOut ? `127.0.0.1:${t.port} did not answer in time` : `nothing answers on 127.0.0.1:${t.port}`,
        },
      });
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}

const forbidden = (res: Response, message: string): void =>
  void res
    .status(403)
    .set(APP_HEADERS)
    .json({ error: { code: 'ErrPortNotAllowed', message } });

const connectionListed = (headers: IncomingHttpHeaders, name: string): boolean =>
  String(headers.connection ?? '')
    .toLowerCase()
    .split(',')
    .some((h) => h.trim() === name);

function forwarded(headers: IncomingHttpHeaders, t: ProxyTarget): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !REQUEST_DROP.has(name) && !connectionListed(headers, name)) out[name] = value;
  }
  out.host = `${LOOPBACK}:${t.port}`;
  out['x-forwarded-prefix'] = `/apps/${t.appId}`;
  return out;
}

/** A redirect the app sends for its own root (`/login`, `http://localhost:<port>/x`) stays under the prefix. */
function relocated(location: string, t: ProxyTarget): string {
  const prefix = `/apps/${t.appId}`;
  for (const origin of [`http://${LOOPBACK}:${t.port}`, `http://localhost:${t.port}`]) {
    if (location === origin || location.startsWith(`${origin}/`))
      return `${prefix}${location.slice(origin.length) || '/'}`;
  }
  return location.startsWith('/') && !location.startsWith('//') ? `${prefix}${location}` : location;
}
