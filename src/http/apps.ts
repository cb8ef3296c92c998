import { closeSync, createReadStream } from 'node:fs';
import { extname } from 'node:path';
import type { Express, NextFunction, Request, Response } from 'express';
import { portServable } from '../actions/webapps/loopback.js';
import { openStaticFile } from '../actions/webapps/targets.js';
import type { App } from '../app.js';
import { WEBAPP_ID } from '../events/webapps.js';
import { getProject, type ProjectRow } from '../projections/projects.js';
import { getWebapp, type WebappRow } from '../projections/webapps.js';
import { APP_HEADERS, proxyToLoopback } from './app-proxy.js';

/**
 * `/apps/<app_id>/…`: the web apps agents present (webapp_present). A static app's page and the files
 * next to it are served from inside its project; a port app is reverse-proxied to 127.0.0.1:<port>
 * (app-proxy.ts). url apps are links, never served. Unknown, retired or archived-project apps are 404.
 *
 * No bearer token is asked for here, and that is acceptable because:
 * - the URL is a capability: the 128-bit random id appears only in its tenant's own messages and tool
 *   results, and nothing lists ids without a token;
 * - what answers is sandboxed (CSP `sandbox` without allow-same-origin): the page runs in an opaque
 *   origin, so it cannot read Colony's storage or act on Colony with anyone's credentials — and Colony
 *   uses no cookies; requests under /apps never carry credentials onward (Cookie and Authorization are
 *   stripped before proxying, Set-Cookie from the app is dropped);
 * - only what an agent registered for its project answers, read-only for static apps, loopback only for
 *   ports, and a port app ends when its agent is stopped.
 */
export const STATIC_CSP =
  "sandbox allow-scripts; default-src 'self' 'unsafe-inline' data:; connect-src 'none'; form-action 'none'; " +
  "object-src 'none'; base-uri 'self'; frame-ancestors 'self'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.wasm': 'application/wasm',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.pdf': 'application/pdf',
};

export function mountApps(http: Express, app: App): void {
  http.use('/apps', (req: Request, res: Response, next: NextFunction) => {
    // The pathname alone: an absolute-form request line (GET http://elsewhere/apps/…) names no host for us.
    const url = new URL(req.originalUrl, 'http://127.0.0.1');
    const m = /^\/apps\/([^/]+)(\/.*)?$/.exec(url.pathname);
    const found = m && WEBAPP_ID.test(m[1]!) ? live(app, m[1]!) : null;
    if (!found) return notFound(res);
    if (m![2] === undefined) return void res.redirect(308, `/apps/${found.w.appId}/${url.search}`); // relative asset URLs need the slash
    const rest = m![2];
    if (found.w.kind === 'port')
      return proxyToLoopback(req, res, {
        appId: found.w.appId,
        port: Number(found.w.target),
        presenterOnLoopback: portServable(app, found.w), // its presenter may have been confined since
        path: `${rest}${url.search}`,
      });
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return void res
        .status(405)
        .set('Allow', 'GET, HEAD')
        .json(error('ErrMethodNotAllowed', 'static apps are read-only'));
    serveStatic(res, req.method === 'HEAD', found.project, found.w.target, rest, next);
  });
}

/** A served app: registered, not retired, not a link, its project not archived. */
function live(app: App, appId: string): { w: WebappRow; project: ProjectRow } | null {
  const w = getWebapp(app.engine.db, appId);
  if (!w || w.retiredAt !== null || w.kind === 'url') return null;
  const project = getProject(app.engine.db, w.projectId);
  return project && !project.archived ? { w, project } : null;
}

function serveStatic(
  res: Response,
  head: boolean,
  project: ProjectRow,
  target: string,
  rest: string,
  next: NextFunction,
): void {
  let segments: string[];
  try {
    segments = rest.split('/').slice(1).map(decodeURIComponent);
  } catch {
    return notFound(res);
  }
  if (segments[segments.length - 1] === '') segments.pop(); // "/apps/<id>/" and "/dir/" name the entry and dir/index.html
  const file = openStaticFile(project, target, segments); // opened afresh on every request, no symlink followed
  if (file === null) return notFound(res);
  res.status(200).set({
    ...APP_HEADERS,
    'Content-Security-Policy': STATIC_CSP,
    'Content-Type': TYPES[extname(file.path).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': String(file.stats.size),
  });
  if (head || file.stats.size === 0) {
    closeSync(file.fd);
    return void res.end();
  }
  // The descriptor that was checked is the one served: the path is never opened again.
  createReadStream('', { fd: file.fd, start: 0, end: Math.max(0, file.stats.size - 1), autoClose: true })
    .on('error', next)
    .pipe(res);
}

const error = (code: string, message: string) => ({ error: { code, message } });

function notFound(res: Response): void {
  res.status(404).set(APP_HEADERS).json(error('ErrNotFound', 'no such web app or file'));
}
